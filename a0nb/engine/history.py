"""The conversation history: messages grouped into topics and summarised bulks, with token caches,
serialisation, and output items with provenance (`history_output`; `chat_messages` turns them into messages).
Token totals and output items are cached per topic and checked against each message's version stamp, so a
step converts and counts only the messages new or changed since the step before. Checks: `history_check`."""
from __future__ import annotations

import copy as _copy
import json
import re
import uuid
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Union

from a0nb.engine.history_output import (MESSAGE_KINDS, Content, HistoryOutput, MessageKind, Origin, OutputItem,
                                        _NO_METADATA, _dumps, as_item, is_raw, render_content)
from a0nb.engine.history_memo import EDITS, Memo, covers, extend, stamp
from a0nb.engine.tokens import TokenCounter

__all__ = ["MessageKind", "Origin", "Message", "Topic", "Bulk", "OutputItem", "HistoryOutput", "History",
           "render_content", "is_raw", "as_item"]

IMAGE_REMOVED = "[image removed from context to save space]"
_TOKEN_FIELDS = frozenset({"ai", "content", "summary"})
_CACHES = frozenset({"_tokens", "_item", "_v", "_text"})  # set by the caches themselves: not a change of the message


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
    # the version stamp: a fresh object once asked for, dropped by any change, so a cache of many messages
    # (a topic's items, its token total) checks they are unchanged by identity alone. Assigning a field is a
    # change; editing a dict content in place is not seen (assign it again: `m.content = m.content`)
    _v: object | None = field(default=None, init=False, repr=False, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        d[name] = value
        if name in _CACHES:
            return
        if name in _TOKEN_FIELDS:  # any change to what the model sees invalidates the cached count
            d["_tokens"] = None
        if d.get("_v") is not None:  # a message some cache covers changed: caches look at their stamps
            EDITS[0] += 1
        d["_item"] = d["_v"] = None  # the cached output item and the stamp go stale with any change
        d.pop("_text", None)  # (the kept text of a dict content: set only by `_cached_text`)

    @property
    def role(self) -> str:
        return "ai" if self.ai else "user"

    def text(self) -> str:
        return render_content(self.content)

    def output_text(self) -> str:
        return self.summary if self.summary is not None else self._cached_text()

    def _cached_text(self) -> str:
        """`text()`, kept until a field changes (for the output item and the token count of a new message)."""
        content = self.content
        if content.__class__ is str:
            return content  # type: ignore[return-value]
        d = self.__dict__
        text = d.get("_text")
        if text is None:
            text = d["_text"] = render_content(content)
        return text  # type: ignore[no-any-return]

    def rendered(self) -> str:
        """`ai: ...` / `user: ...`: the text tokens are counted on and summarisers read."""
        return f"{self.role}: {self.output_text()}"

    def tokens(self, counter: TokenCounter) -> int:
        """The count of `rendered()` (given to the counter in its two parts: a bound needs no joined text)."""
        d = self.__dict__
        cached = d["_tokens"]
        if cached is not None and cached[0] is counter.fn:
            return cached[1]  # type: ignore[no-any-return]
        summary = d["summary"]
        value = counter.count_rendered("ai" if d["ai"] else "user",
                                       summary if summary is not None else self._cached_text())
        d["_tokens"] = (counter.fn, value)  # (a cache: not a change of the message)
        return value

    def output_content(self) -> str | list:
        if self.summary is not None:
            return self.summary
        if is_raw(self.content):
            return list(self.content["raw_content"])
        return self._cached_text()

    def clone(self) -> Message:
        new = Message(self.id, self.ai, _copy.deepcopy(self.content) if not isinstance(self.content, str)
                      else self.content, self.kind, self.summary, _copy.deepcopy(self.metadata))
        object.__setattr__(new, "_tokens", self._tokens)
        return new


def _new_id() -> str:
    return uuid.uuid4().hex[:12]


_new, _set = object.__new__, object.__setattr__


_LABELS: list[list[str]] = [[]]  # "topic 1", "topic 2", ...: made once (replaced whole, never edited)


def _labels(n: int) -> list[str]:
    """The labels of the first `n` topics."""
    labels = _LABELS[0]
    if len(labels) < n:
        labels = _LABELS[0] = [f"topic {i}" for i in range(1, 2 * n + 1)]
    return labels[:n]


def _summary_tokens(record: Topic | Bulk, counter: TokenCounter) -> int:
    memo = record._tok
    if memo.__class__ is tuple and memo[0] is counter.fn and memo[1] is record.summary:
        return memo[2]  # type: ignore[no-any-return]
    value = counter.count(f"user: {record.summary}")
    record._tok = (counter.fn, record.summary, value)
    return value


@dataclass
class Topic:
    messages: list[Message] = field(default_factory=list)
    summary: str | None = None
    id: str = field(default_factory=_new_id)
    # caches over the messages (`Memo`s): the token total, the output items
    _tok: Any = field(default=None, init=False, repr=False, compare=False)
    _out: Any = field(default=None, init=False, repr=False, compare=False)

    def tokens(self, counter: TokenCounter) -> int:
        if self.summary is not None:
            return _summary_tokens(self, counter)
        edits, messages, fn = EDITS[0], self.messages, counter.fn
        memo = self._tok if self._tok.__class__ is Memo else None
        memo, tail = extend(memo, fn, messages, edits)
        if tail or memo.edits != edits:
            # only the messages new or changed since the last count are counted, and stamped (as `stamp`
            # does), in one loop
            total, stamps = memo.total, memo.stamps[:]
            for m in tail:
                d = m.__dict__
                cached = d["_tokens"]
                total += cached[1] if cached is not None and cached[0] is fn else m.tokens(counter)
                v = d["_v"]
                if v is None:
                    v = d["_v"] = object()
                stamps.append(v)
            memo = self._tok = Memo(fn, memo.msgs + tail, stamps, edits, total=total)
        return memo.total

    def all_messages(self) -> list[Message]:
        return list(self.messages)


@dataclass
class Bulk:
    records: list[Union[Topic, "Bulk"]]
    summary: str
    id: str = field(default_factory=_new_id)
    _tok: Any = field(default=None, init=False, repr=False, compare=False)
    _out: Any = field(default=None, init=False, repr=False, compare=False)

    def tokens(self, counter: TokenCounter) -> int:
        return _summary_tokens(self, counter)

    def all_messages(self) -> list[Message]:
        out: list[Message] = []
        for record in self.records:
            out += record.messages if isinstance(record, Topic) else record.all_messages()
        return out


def _summary_item(record: Topic | Bulk, origin: Origin, where: str) -> OutputItem:
    ids = tuple(m.id for m in record.all_messages())
    return OutputItem(False, record.summary or "", ids, origin, where, "summary", MappingProxyType({"id": record.id}))


def _message_item(message: Message, where: str) -> OutputItem:
    d = message.__dict__
    cached = d.get("_item")
    if cached is not None and cached[0] == where:
        return cached[1]  # type: ignore[no-any-return]
    content, summary, metadata = d["content"], d["summary"], d["metadata"]
    item = _new(OutputItem)  # (new_item, inlined: one per new message each step)
    _set(item, "__dict__", {
        "ai": d["ai"], "content": content if summary is None and content.__class__ is str else message.output_content(),
        "message_ids": (d["id"],), "origin": "raw" if summary is None else "summarised-message", "where": where,
        "kind": d["kind"], "metadata": MappingProxyType(dict(metadata)) if metadata else _NO_METADATA})
    d["_item"] = (where, item)  # (a cache: not a change of the message)
    return item


def _topic_items(topic: Topic, where: str) -> Memo:
    edits, messages = EDITS[0], topic.messages
    if topic.summary is not None:
        return _summary_memo(topic, (where, topic.summary, topic.id), messages, "topic-summary", edits)
    memo, tail = extend(topic._out, where, messages, edits)
    if tail or memo.edits != edits:
        # only the messages new or changed since the last call: their items and stamps
        new: list[OutputItem] = []
        stamps: list[object] = []
        images, at = memo.images, len(memo.items)
        for m in tail:
            item = _message_item(m, where)
            if item.content.__class__ is list and _is_image(item):
                images = [*images, at + len(new)]
            new.append(item)
            v = m._v
            if v is None:  # (stamp, inlined)
                v = m.__dict__["_v"] = object()
            stamps.append(v)
        memo = topic._out = Memo(where, memo.msgs + tail, memo.stamps + stamps, edits, memo.items + new, images)
    return memo


def _summary_memo(record: Topic | Bulk, key: Any, messages: list[Message], origin: Origin, edits: int) -> Memo:
    memo = record._out
    if memo is None or memo.key != key or len(messages) != len(memo.msgs) or not covers(memo, messages):
        memo = record._out = Memo(key, list(messages), [stamp(m) for m in messages], edits,
                                   [_summary_item(record, origin, key[0])])
    return memo  # type: ignore[no-any-return]


def _bulk_item(bulk: Bulk, where: str) -> OutputItem:
    memo = _summary_memo(bulk, (where, bulk.summary, bulk.id), bulk.all_messages(), "bulk-summary", EDITS[0])
    return memo.items[0]


def _is_image(item: OutputItem) -> bool:
    content = item.content
    return item.origin == "raw" and isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") == "image_url" for p in content)


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
        self.seq += 1
        message = object.__new__(Message)  # as Message(...) makes it, without a __setattr__ call per field
        message.__dict__.update(id=f"m{self.seq}", ai=bool(ai), content=content, kind=kind, summary=None,
                                metadata=metadata, _tokens=None, _item=None, _v=None)
        self.current.messages.append(message)
        return message

    def new_topic(self) -> None:
        if self.current.messages or self.current.summary is not None:
            self.topics.append(self.current)
            self.current = Topic(id=self.new_id("t"))

    def output(self, *, vision: bool = True, max_embeds: int = 10) -> HistoryOutput:
        """The items the model sees, from each topic's cached items: a message is converted only when it is
        new or changed. Images are expensive: only the newest `max_embeds` stay (all when <= 0), none
        without vision."""
        out, images, edits, topics = list.__new__(HistoryOutput), [], EDITS[0], self.topics  # (empty: no __init__)
        for i, b in enumerate(self.bulks, 1):
            list.append(out, _bulk_item(b, f"bulk {i}"))
        for topic, where in zip([*topics, self.current], [*_labels(len(topics)), "current topic"]):
            memo = topic._out  # (the usual topic, unchanged since its items were made: no call)
            if memo.__class__ is not Memo or memo.edits != edits or memo.key != where or topic.summary is not None \
                    or memo.msgs != topic.messages:
                memo = _topic_items(topic, where)
            if memo.images:
                images += [len(out) + i for i in memo.images]
            list.extend(out, memo.items)
        if images and (not vision or 0 < max_embeds < len(images)):
            for i in images[:-max_embeds] if vision else images:
                item = out[i]
                list.__setitem__(out, i, OutputItem(item.ai, IMAGE_REMOVED, item.message_ids, "summarised-message",
                                                    item.where, item.kind, item.metadata))
        return out

    def messages(self) -> list[Message]:
        result = [m for b in self.bulks for m in b.all_messages()]
        result += [m for t in self.topics for m in t.messages]
        return result + self.current.messages

    def tokens(self, counter: TokenCounter | None = None) -> int:
        counter = counter or self.counter
        fn, edits = counter.fn, EDITS[0]
        total = sum([b.tokens(counter) for b in self.bulks]) if self.bulks else 0
        for t in self.topics:
            memo = t._tok  # (the usual closed topic, unchanged since it was counted: no call)
            if memo.__class__ is Memo and memo.edits == edits and memo.key is fn and t.summary is None \
                    and memo.msgs == t.messages:
                total += memo.total
            else:
                total += t.tokens(counter)
        return total + self.current.tokens(counter)

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
        from a0nb.engine.history_check import validate  # (it imports this module)
        return validate(self)


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
