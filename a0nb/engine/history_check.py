"""Consistency checks of a history (`History.validate()`): every problem collected as a line instead of
raised, so the inspector can list them all."""
from __future__ import annotations

from a0nb.engine.history import MESSAGE_KINDS, Bulk, History, Message, Topic, _dumps, is_raw

__all__ = ["validate"]


def validate(history: History) -> list[str]:
    return _Validator().run(history)


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
