"""`loop_data.history_output`: the list of output items of one model call, which also takes Agent Zero's
`{"ai": bool, "content": ...}` dicts (an upstream extension appends or inserts them) and keeps them as items."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterable, SupportsIndex

from a0nb.engine.history import OutputItem, is_raw, render_content

__all__ = ["HistoryOutput", "as_item"]


def as_item(value: Any) -> Any:
    """An Agent Zero output message as an `OutputItem`; anything else as is."""
    if isinstance(value, OutputItem) or not isinstance(value, Mapping):
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
    """A list of `OutputItem`s; dicts shaped as Agent Zero's output messages become items on the way in."""

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
