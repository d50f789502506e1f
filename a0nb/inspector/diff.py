"""What changed between two model calls: parts that appeared, vanished or changed (matched by `Part.key`,
repeated keys by occurrence), with unified diffs of changed text, plus message-count and token deltas."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

MAX_DIFF_LINES = 300


@dataclass(frozen=True)
class Change:
    key: str
    old: Any  # Part | None
    new: Any  # Part | None
    diff: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The part's label (the key without its kind prefix), with ` #n` for a repeated key."""
        return self.key.split(":", 1)[-1]

    @property
    def tokens_delta(self) -> int:
        return (self.new.tokens if self.new else 0) - (self.old.tokens if self.old else 0)


@dataclass
class CallDiff:
    a: Any
    b: Any
    appeared: list[Change] = field(default_factory=list)
    vanished: list[Change] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    unchanged: int = 0

    @property
    def messages_delta(self) -> int:
        return len(self.b.messages) - len(self.a.messages)

    @property
    def tokens_delta(self) -> int:
        return self.b.tokens - self.a.tokens

    @property
    def empty(self) -> bool:
        return not (self.appeared or self.vanished or self.changed)


def keyed(parts: list[Any]) -> dict[str, Any]:
    """`Part.key`, with ` #2`, ` #3` … for repeated keys (several messages in one topic)."""
    out: dict[str, Any] = {}
    seen: dict[str, int] = {}
    for p in parts:
        n = seen[p.key] = seen.get(p.key, 0) + 1
        out[p.key if n == 1 else f"{p.key} #{n}"] = p
    return out


def unified(old: str, new: str, name: str) -> tuple[str, ...]:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{name}", f"b/{name}", n=2, lineterm=""))
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"… {len(lines) - MAX_DIFF_LINES} more diff lines"]
    return tuple(lines)


def diff_calls(a: Any, b: Any) -> CallDiff:
    """Call `b` against call `a` (usually the call before it)."""
    old, new = keyed(a.parts), keyed(b.parts)
    result = CallDiff(a, b)
    for key, part in new.items():
        before = old.get(key)
        if before is None:
            result.appeared.append(Change(key, None, part))
        elif before.text != part.text or before.origin != part.origin:
            result.changed.append(Change(key, before, part, unified(before.text, part.text, key.split(":", 1)[-1])))
        else:
            result.unchanged += 1
    result.vanished = [Change(k, p, None) for k, p in old.items() if k not in new]
    return result
