"""Call records: every model call (chat and utility) with the exact messages, the same content as
parts with provenance, token counts, usage, the reply and diagnostics. Inspectors read only these."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal

from a0nb.atomic_io import write_text

PartKind = Literal["system", "history", "extras", "skill", "user", "other"]
Role = Literal["chat", "utility"]


@dataclass(frozen=True)
class Part:
    """One piece of a model call's input and where it came from."""

    kind: PartKind
    label: str                      # "system: main prompt", "history: topic 2", "extras: current_datetime"
    text: str
    tokens: int
    message_index: int              # which of `CallRecord.messages` holds it
    source: str = ""                # human-readable provenance: file (root) via extension
    files: tuple[str, ...] = ()     # prompt files that produced it
    extension: str = ""             # the extension file (or registration) that produced it
    origin: str = ""                # raw | summarised | temporary | persistent | reattached | user
    overrode: tuple[str, ...] = ()  # lower copies the winning file beat

    @property
    def key(self) -> str:
        """Stable identity for diffs between calls."""
        return f"{self.kind}:{self.label}"

    def at(self, message_index: int) -> "Part":
        """The same part at another message (`replace(self, message_index=...)`, made as `new_part` makes one)."""
        part = _new(Part)
        _set(part, "__dict__", {**self.__dict__, "message_index": message_index})
        return part


_new, _set = object.__new__, object.__setattr__


class _Tokens:
    """`Part.tokens` of a part made by `lazy_part`: counted when first read (a record's total, the inspector, a
    comparison, `to_dict`), then kept as any part's count is. A part made otherwise holds its count itself."""

    def __get__(self, part: Any, owner: Any = None) -> Any:
        if part is None:
            return self
        d = part.__dict__
        count = d.get("_count")
        if count is None:
            raise AttributeError("tokens")
        counter, fn, text = count[0], count[1], d["text"]
        d["tokens"] = counter.count(text) if counter.fn is fn else fn(text)  # (the rule it was made under)
        d.pop("_count", None)
        return d["tokens"]


setattr(Part, "tokens", _Tokens())  # (after the dataclass is made: a field without a default, read from the instance first)


def new_part(kind: PartKind, label: str, text: str, tokens: int, message_index: int, source: str = "",
             files: tuple[str, ...] = (), extension: str = "", origin: str = "", overrode: tuple[str, ...] = ()) -> Part:
    """`Part(...)`, the same object, made without the frozen dataclass's one `object.__setattr__` per field
    (half the time: a step makes one for each new history item and each moved extras key)."""
    part = _new(Part)
    _set(part, "__dict__", {"kind": kind, "label": label, "text": text, "tokens": tokens, "message_index": message_index,
                            "source": source, "files": files, "extension": extension, "origin": origin,
                            "overrode": overrode})
    return part


def lazy_part(kind: PartKind, label: str, text: str, counter: Any, message_index: int, source: str = "",
              files: tuple[str, ...] = (), extension: str = "", origin: str = "", overrode: tuple[str, ...] = ()) -> Part:
    """`new_part` with `tokens=counter.count(text)` made when the count is first read, not now: a step makes a part
    for each new history message, and the loop itself never reads its count (a record's readers do). Counted as
    `counter` counts then, or by the rule it had now if it changed since: the value `new_part`'s would have been."""
    part = _new(Part)
    _set(part, "__dict__", {"kind": kind, "label": label, "text": text, "message_index": message_index,
                            "source": source, "files": files, "extension": extension, "origin": origin,
                            "overrode": overrode, "_count": (counter, counter.fn)})
    return part


@dataclass
class CallRecord:
    index: int
    role: Role
    model: str
    messages: list[dict[str, Any]]
    parts: list[Part] = field(default_factory=list)
    turn: int = 0
    iteration: int = 0
    agent: int = 0
    parent: int | None = None       # index of the parent call (subordinate agents' calls nest under it)
    purpose: str = "chat"           # chat | compaction | summary | ...
    response: str = ""
    reasoning: str = ""
    tool_request: dict[str, Any] | None = None
    tool_result: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    cost: float | None = None
    latency: float | None = None
    diagnostics: list[str] = field(default_factory=list)
    error: str | None = None
    provider_extensions: list[str] = field(default_factory=list)  # e.g. `_10_think_tags.ThinkTags`
    metadata: dict[str, Any] = field(default_factory=dict)  # the final message's (Crystal Lattice plugins)
    children: list["CallRecord"] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:
        """A finished record held by reference (engine/record_store.py: as the record before it plus what
        changed, or spilled to disk) builds its messages and parts again on access."""
        lazy = self.__dict__.get("_fields_from")
        if lazy is not None and name in ("messages", "parts"):
            holder, key = lazy
            return holder.load(key)[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.parts)

    def composition(self) -> dict[str, int]:
        """Tokens per composition bucket (system sections, raw/summarised history, each extras key, skills)."""
        out: dict[str, int] = {}
        for p in self.parts:
            if p.kind == "history":
                bucket = "history (summarised)" if p.origin == "summarised" else "history (raw)"
            elif p.kind == "extras":
                bucket = f"extras {p.origin}: {p.label.split(': ', 1)[-1]}"
            elif p.kind == "skill":
                bucket = "reattached skills"
            else:
                bucket = p.label
            out[bucket] = out.get(bucket, 0) + p.tokens
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["children"] = [c.to_dict() for c in self.children]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CallRecord":
        d = dict(d)
        d["parts"] = [Part(**{**p, "files": tuple(p.get("files", ())), "overrode": tuple(p.get("overrode", ()))})
                      for p in d.get("parts", [])]
        d["children"] = [cls.from_dict(c) for c in d.get("children", [])]
        return cls(**d)


def export_jsonl(records: Iterable[CallRecord], path: Path | str) -> Path:
    text = "".join(json.dumps(r.to_dict(), ensure_ascii=False, default=str) + "\n" for r in records)
    return write_text(Path(path), text, "trace")


def import_jsonl(path: Path | str) -> list[CallRecord]:
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(CallRecord.from_dict(json.loads(line)))
    return out
