"""What the model sees of the history: `OutputItem`s (one message, summary or added note each, with where it
came from) and `loop_data.history_output`, the list of them that also takes Agent Zero's `{"ai": bool,
"content": ...}` dicts (an upstream extension appends or inserts them) and keeps them as items."""
from __future__ import annotations

import json
import json.encoder
from collections.abc import Mapping as _Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Literal, Mapping, SupportsIndex, TypeGuard, Union, get_args

__all__ = ["HistoryOutput", "as_item", "new_item", "OutputItem", "render_content", "is_raw", "MessageKind", "Origin"]

MessageKind = Literal["user", "ai", "tool_result", "warning", "intervention", "summary", "extras", "other"]
Origin = Literal["raw", "summarised-message", "topic-summary", "bulk-summary"]
MESSAGE_KINDS: frozenset[str] = frozenset(get_args(MessageKind))
Content = Union[str, dict, list]


def is_raw(content: Any) -> TypeGuard[dict[str, Any]]:
    """A raw (multimodal) message: {"raw_content": [provider parts], "preview": "text for counting"}."""
    return isinstance(content, dict) and "raw_content" in content


# json.dumps(value, ensure_ascii=False) makes a JSONEncoder and its C encoder on every call (non-default
# arguments); this C encoder, made once with the same settings, writes the same text. Without a circular
# check (a shared check would keep marks an error left behind): any error, a cycle's RecursionError included,
# is raised again by json.dumps itself, with its own message
_ENCODE: Any = json.encoder.c_make_encoder and json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, json.JSONEncoder().default, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)


def _dumps(value: Any) -> str:
    if _ENCODE is not None:
        try:
            return "".join(_ENCODE(value, 0))
        except Exception:
            pass
    return json.dumps(value, ensure_ascii=False)


def render_content(content: Content) -> str:
    """Text of a content value: strings as is, dicts/lists as one-line JSON, raw messages by their preview."""
    if isinstance(content, str):
        return content
    if is_raw(content):
        preview = content.get("preview")
        return preview if isinstance(preview, str) else _dumps(content)[:100] + "... (trimmed)"
    return _dumps(content)


@dataclass(frozen=True)
class OutputItem:
    """One history message as it goes to the model, with where it came from."""
    ai: bool
    content: str | list
    message_ids: tuple[str, ...]
    origin: Origin
    where: str
    kind: MessageKind
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    # Agent Zero's output messages are `{"ai": ..., "content": ...}` dicts: an item answers those two keys
    def __getitem__(self, key: str) -> Any:
        if key not in ("ai", "content"):
            raise KeyError(f"{key!r}: a history output item has the keys 'ai' and 'content' (as Agent Zero's)")
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in ("ai", "content") else default

    def keys(self) -> tuple[str, str]:
        return ("ai", "content")

    def __iter__(self) -> Any:
        return iter(("ai", "content"))

    def __contains__(self, key: object) -> bool:
        return key in ("ai", "content")

    def __setitem__(self, key: str, value: Any) -> None:
        raise TypeError("history output items are read-only in a0nb: replace the item instead, e.g. "
                        "loop_data.history_output[i] = {'ai': False, 'content': '...'}")


_new, _set = object.__new__, object.__setattr__
_NO_METADATA: Mapping[str, Any] = MappingProxyType({})


def new_item(ai: bool, content: str | list, message_ids: tuple[str, ...], origin: Origin, where: str,
             kind: MessageKind, metadata: Mapping[str, Any] = _NO_METADATA) -> OutputItem:
    """`OutputItem(...)`, the same object, made without the frozen dataclass's `object.__setattr__` per field
    (a step makes one for each new history message and for the extras)."""
    item = _new(OutputItem)
    _set(item, "__dict__", {"ai": ai, "content": content, "message_ids": message_ids, "origin": origin,
                            "where": where, "kind": kind, "metadata": metadata})
    return item


def as_item(value: Any) -> Any:
    """An Agent Zero output message as an `OutputItem`; anything else as is."""
    if isinstance(value, OutputItem) or not isinstance(value, _Mapping):
        return value
    if "content" not in value:
        raise TypeError(f"a history output message needs 'ai' and 'content' keys (as Agent Zero's), got {dict(value)!r}")
    content = value["content"]
    if is_raw(content):
        content = list(content["raw_content"])
    elif not isinstance(content, (str, list)):
        content = render_content(content)
    return OutputItem(bool(value.get("ai", False)), content, (), "raw", "added by an extension", "other")


class HistoryOutput(list):  # type: ignore[type-arg]
    """`loop_data.history_output`: a list of `OutputItem`s (what `History.output()` returns); dicts shaped as
    Agent Zero's output messages become items on the way in."""

    def __init__(self, items: Iterable[Any] = ()) -> None:
        super().__init__(as_item(x) for x in items)

    def append(self, value: Any) -> None:
        super().append(as_item(value))

    def insert(self, index: SupportsIndex, value: Any) -> None:
        super().insert(index, as_item(value))

    def extend(self, values: Iterable[Any]) -> None:
        super().extend(as_item(x) for x in values)

    def __iadd__(self, values: Iterable[Any]) -> "HistoryOutput":  # type: ignore[override,misc]
        self.extend(values)
        return self

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            super().__setitem__(index, [as_item(x) for x in value])
        else:
            super().__setitem__(index, as_item(value))
