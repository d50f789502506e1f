"""The conversation history: messages grouped into topics and summarised bulks, with token caches,
serialisation, consistency checks and output items with provenance (`chat_messages` turns them into messages)."""
from __future__ import annotations

import copy as _copy
import json
import re
import uuid
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Mapping, TypeGuard, Union, get_args

from a0nb.engine.tokens import TokenCounter

__all__ = ["MessageKind", "Origin", "Message", "Topic", "Bulk", "OutputItem", "History", "render_content", "is_raw"]

MessageKind = Literal["user", "ai", "tool_result", "warning", "intervention", "summary", "extras", "other"]
Origin = Literal["raw", "summarised-message", "topic-summary", "bulk-summary"]
MESSAGE_KINDS: frozenset[str] = frozenset(get_args(MessageKind))
Content = Union[str, dict, list]

IMAGE_REMOVED = "[image removed from context to save space]"
_TOKEN_FIELDS = frozenset({"ai", "content", "summary"})


def is_raw(content: Any) -> TypeGuard[dict[str, Any]]:
    """A raw (multimodal) message: {"raw_content": [provider parts], "preview": "text for counting"}."""
    return isinstance(content, dict) and "raw_content" in content


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def render_content(content: Content) -> str:
    """Text of a content value: strings as is, dicts/lists as one-line JSON, raw messages by their preview."""
    if isinstance(content, str):
        return content
    if is_raw(content):
        preview = content.get("preview")
        return preview if isinstance(preview, str) else _dumps(content)[:100] + "... (trimmed)"
    return _dumps(content)


@dataclass
class Message:
    id: str
    ai: bool
    content: Content
    kind: MessageKind = "other"
    summary: str | None = None  # when set it replaces content in output (truncation keeps the original here)
    metadata: dict[str, Any] = field(default_factory=dict)
    _tokens: tuple[Any, int] | None = field(default=None, init=False, repr=False, compare=False)
    _item: tuple[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _TOKEN_FIELDS:  # any change to what the model sees invalidates the cached count
            object.__setattr__(self, "_tokens", None)
        if name != "_item":  # the cached output item goes stale with any change
            object.__setattr__(self, "_item", None)

    @property
    def role(self) -> str:
        return "ai" if self.ai else "user"

    def text(self) -> str:
        return render_content(self.content)

    def output_text(self) -> str:
        return self.summary if self.summary is not None else self.text()

    def rendered(self) -> str:
        """`ai: ...` / `user: ...`: the text tokens are counted on and summarisers read."""
        return f"{self.role}: {self.output_text()}"

    def tokens(self, counter: TokenCounter) -> int:
        cached = self._tokens
        if cached is not None and cached[0] is counter.fn:
            return cached[1]
        value = counter.count(self.rendered())
        object.__setattr__(self, "_tokens", (counter.fn, value))
        return value

    def output_content(self) -> str | list:
        if self.summary is not None:
            return self.summary
        if is_raw(self.content):
            return list(self.content["raw_content"])
        return self.text()

    def clone(self) -> Message:
        new = Message(self.id, self.ai, _copy.deepcopy(self.content) if not isinstance(self.content, str)
                      else self.content, self.kind, self.summary, _copy.deepcopy(self.metadata))
        object.__setattr__(new, "_tokens", self._tokens)
        return new


def _new_id() -> str:
    return uuid.uuid4().hex[:12]


@dataclass
class Topic:
    messages: list[Message] = field(default_factory=list)
    summary: str | None = None
    id: str = field(default_factory=_new_id)

    def tokens(self, counter: TokenCounter) -> int:
        if self.summary is not None:
            return counter.count(f"user: {self.summary}")
        fn, total = counter.fn, 0
        for m in self.messages:  # once per step over the whole history: the cached count read inline
            cached = m._tokens
            total += cached[1] if cached is not None and cached[0] is fn else m.tokens(counter)
        return total

    def all_messages(self) -> list[Message]:
        return list(self.messages)


@dataclass
class Bulk:
    records: list[Union[Topic, "Bulk"]]
    summary: str
    id: str = field(default_factory=_new_id)

    def tokens(self, counter: TokenCounter) -> int:
        return counter.count(f"user: {self.summary}")

    def all_messages(self) -> list[Message]:
        return [m for record in self.records for m in record.all_messages()]


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


def _summary_item(record: Topic | Bulk, origin: Origin, where: str) -> OutputItem:
    ids = tuple(m.id for m in record.all_messages())
    return OutputItem(False, record.summary or "", ids, origin, where, "summary", MappingProxyType({"id": record.id}))


def _message_item(message: Message, where: str) -> OutputItem:
    cached = message._item
    if cached is not None and cached[0] == where:
        return cached[1]  # type: ignore[no-any-return]
    origin: Origin = "summarised-message" if message.summary is not None else "raw"
    item = OutputItem(message.ai, message.output_content(), (message.id,), origin, where, message.kind,
                      MappingProxyType(dict(message.metadata)))
    object.__setattr__(message, "_item", (where, item))
    return item


def _topic_items(topic: Topic, where: str) -> list[OutputItem]:
    if topic.summary is not None:
        return [_summary_item(topic, "topic-summary", where)]
    out = []
    for m in topic.messages:  # once per step over the whole history: the cached item read inline
        cached = m._item
        out.append(cached[1] if cached is not None and cached[0] == where else _message_item(m, where))
    return out


def _has_image(content: str | list) -> bool:
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") == "image_url" for p in content)


def _trim_images(items: list[OutputItem], vision: bool, max_embeds: int) -> list[OutputItem]:
    # Images are expensive; only the newest `max_embeds` stay (all when <= 0), none without vision.
    kept = 0
    result = list(items)
    for i in range(len(result) - 1, -1, -1):
        item = result[i]
        if item.content.__class__ is str or item.origin != "raw" or not _has_image(item.content):
            continue
        kept += 1
        if not vision or (max_embeds > 0 and kept > max_embeds):
            result[i] = OutputItem(item.ai, IMAGE_REMOVED, item.message_ids, "summarised-message", item.where,
                                   item.kind, item.metadata)
    return result


@dataclass
class History:
    """bulks (oldest, summarised) -> topics (sealed) -> current topic; one topic per user message."""
    bulks: list[Bulk] = field(default_factory=list)
    topics: list[Topic] = field(default_factory=list)
    current: Topic = field(default_factory=lambda: Topic(id="t0"))
    counter: TokenCounter = field(default_factory=TokenCounter, repr=False, compare=False)
    seq: int = field(default=0, repr=False)

    def new_id(self, prefix: str = "m") -> str:
        """Deterministic ids (m1, t2, b3, ...) so saved histories and golden files are stable."""
        self.seq += 1
        return f"{prefix}{self.seq}"

    def add(self, ai: bool, content: Content, kind: MessageKind = "other", **metadata: Any) -> Message:
        if kind not in MESSAGE_KINDS:
            raise ValueError(f"unknown message kind {kind!r}; expected one of {sorted(MESSAGE_KINDS)}")
        message = Message(self.new_id("m"), bool(ai), content, kind, None, dict(metadata))
        self.current.messages.append(message)
        return message

    def new_topic(self) -> None:
        if self.current.messages or self.current.summary is not None:
            self.topics.append(self.current)
            self.current = Topic(id=self.new_id("t"))

    def output(self, *, vision: bool = True, max_embeds: int = 10) -> list[OutputItem]:
        items = [_summary_item(b, "bulk-summary", f"bulk {i}") for i, b in enumerate(self.bulks, 1)]
        for i, topic in enumerate(self.topics, 1):
            items.extend(_topic_items(topic, f"topic {i}"))
        items.extend(_topic_items(self.current, "current topic"))
        return _trim_images(items, vision, max_embeds)

    def messages(self) -> list[Message]:
        result = [m for b in self.bulks for m in b.all_messages()]
        result += [m for t in self.topics for m in t.messages]
        return result + self.current.messages

    def tokens(self, counter: TokenCounter | None = None) -> int:
        counter = counter or self.counter
        return (sum(b.tokens(counter) for b in self.bulks) + sum(t.tokens(counter) for t in self.topics)
                + self.current.tokens(counter))

    def copy(self) -> History:
        return History([_copy_bulk(b) for b in self.bulks], [_copy_topic(t) for t in self.topics],
                       _copy_topic(self.current), self.counter, self.seq)

    def to_dict(self) -> dict[str, Any]:
        return {"_cls": "History", "seq": self.seq, "bulks": [_record_dict(b) for b in self.bulks],
                "topics": [_record_dict(t) for t in self.topics], "current": _record_dict(self.current)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], counter: TokenCounter | None = None) -> History:
        history = cls(bulks=[_bulk_from(b) for b in d.get("bulks", [])],
                      topics=[_topic_from(t) for t in d.get("topics", [])],
                      current=_topic_from(d.get("current") or {"messages": []}),
                      seq=int(d.get("seq", 0)))
        # ids written by hand or by an older version must not be handed out again
        # (a look-alike inside content only makes the counter skip ahead, which is harmless)
        used = re.findall(r'"id": "[mtb](\d+)"', json.dumps(d, ensure_ascii=False, default=str))
        history.seq = max([history.seq] + [int(n) for n in used])
        if counter is not None:
            history.counter = counter
        return history

    def validate(self) -> list[str]:
        return _Validator().run(self)


def _copy_topic(topic: Topic) -> Topic:
    return Topic([m.clone() for m in topic.messages], topic.summary, topic.id)


def _copy_bulk(bulk: Bulk) -> Bulk:
    return Bulk([_copy_bulk(r) if isinstance(r, Bulk) else _copy_topic(r) for r in bulk.records],
                bulk.summary, bulk.id)


def _record_dict(record: Topic | Bulk) -> dict[str, Any]:
    if isinstance(record, Bulk):
        return {"_cls": "Bulk", "id": record.id, "summary": record.summary,
                "records": [_record_dict(r) for r in record.records]}
    return {"_cls": "Topic", "id": record.id, "summary": record.summary,
            "messages": [{"_cls": "Message", "id": m.id, "ai": m.ai, "kind": m.kind, "content": m.content,
                          "summary": m.summary, "metadata": m.metadata} for m in record.messages]}


def _message_from(d: Mapping[str, Any]) -> Message:
    return Message(str(d["id"]), bool(d["ai"]), _copy.deepcopy(d["content"]), d.get("kind", "other"),
                   d.get("summary"), dict(d.get("metadata") or {}))


def _topic_from(d: Mapping[str, Any]) -> Topic:
    return Topic([_message_from(m) for m in d.get("messages", [])], d.get("summary"), str(d.get("id") or _new_id()))


def _bulk_from(d: Mapping[str, Any]) -> Bulk:
    records: list[Topic | Bulk] = [_bulk_from(r) if r.get("_cls") == "Bulk" else _topic_from(r)
                                   for r in d.get("records", [])]
    return Bulk(records, str(d.get("summary") or ""), str(d.get("id") or _new_id()))


class _Validator:
    """Collects consistency problems instead of raising, so the inspector can list them all."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.message_ids: set[str] = set()
        self.record_ids: set[str] = set()
        self.objects: set[int] = set()

    def run(self, history: History) -> list[str]:
        for i, bulk in enumerate(history.bulks, 1):
            self.record(bulk, f"bulk {i}")
        for i, topic in enumerate(history.topics, 1):
            self.record(topic, f"topic {i}")
            if not topic.messages and topic.summary is None:
                self.problems.append(f"topic {i}: sealed topic is empty")
        self.record(history.current, "current topic")
        return self.problems

    def seen(self, obj: object, where: str) -> bool:
        if id(obj) in self.objects:
            self.problems.append(f"{where}: the same object appears twice in the history")
            return True
        self.objects.add(id(obj))
        return False

    def record(self, record: object, where: str) -> None:
        if not isinstance(record, (Topic, Bulk)):
            self.problems.append(f"{where}: expected a Topic or Bulk, got {type(record).__name__}")
            return
        if self.seen(record, where):
            return
        if record.id in self.record_ids:
            self.problems.append(f"{where}: duplicate topic/bulk id {record.id!r}")
        self.record_ids.add(record.id)
        if record.summary is not None and not isinstance(record.summary, str):
            self.problems.append(f"{where}: summary must be a string")
        if isinstance(record, Bulk):
            if not record.records:
                self.problems.append(f"{where}: bulk has no records")
            for j, child in enumerate(record.records, 1):
                self.record(child, f"{where} record {j}")
        else:
            for j, message in enumerate(record.messages, 1):
                self.message(message, f"{where} message {j}")

    def message(self, m: object, where: str) -> None:
        if not isinstance(m, Message):
            self.problems.append(f"{where}: expected a Message, got {type(m).__name__}")
            return
        if self.seen(m, where):
            return
        if not isinstance(m.id, str) or not m.id:
            self.problems.append(f"{where}: id must be a non-empty string")
        elif m.id in self.message_ids:
            self.problems.append(f"{where}: duplicate message id {m.id!r}")
        self.message_ids.add(m.id)
        if not isinstance(m.ai, bool):
            self.problems.append(f"{where}: ai must be a bool")
        if m.kind not in MESSAGE_KINDS:
            self.problems.append(f"{where}: unknown kind {m.kind!r}")
        if m.summary is not None and not isinstance(m.summary, str):
            self.problems.append(f"{where}: summary must be a string or None")
        if not isinstance(m.metadata, dict):
            self.problems.append(f"{where}: metadata must be a dict")
        self.content(m.content, where)

    def content(self, content: object, where: str) -> None:
        if not isinstance(content, (str, dict, list)):
            self.problems.append(f"{where}: content must be str, dict or list, got {type(content).__name__}")
            return
        if is_raw(content) and not isinstance(content["raw_content"], list):
            self.problems.append(f"{where}: raw_content must be a list of parts")
        if not isinstance(content, str):
            try:
                _dumps(content)
            except (TypeError, ValueError) as e:
                self.problems.append(f"{where}: content is not JSON-serialisable ({e})")
