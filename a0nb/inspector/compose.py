"""Context-composition buckets of a call (from `CallRecord.composition()`), their kind, a stable stacking
order and colours that stay the same for a bucket across all calls of a turn."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from a0nb.inspector.html import FAMILIES

ORDER = ("system", "summarised", "raw", "skill", "persistent", "temporary", "other")


def family(bucket: str) -> str:
    if bucket.startswith("system"):
        return "system"
    if bucket == "history (summarised)":
        return "summarised"
    if bucket.startswith("history"):
        return "raw"
    if bucket.startswith("extras persistent"):
        return "persistent"
    if bucket.startswith("extras temporary") or bucket.startswith("extras"):
        return "temporary"
    if bucket == "reattached skills":
        return "skill"
    return "other"


def buckets(record: Any) -> list[tuple[str, int]]:
    """(bucket, tokens) in stacking order: system sections, history, skills, extras, other."""
    comp = list(record.composition().items())
    return sorted(comp, key=lambda kv: ORDER.index(family(kv[0])))


@dataclass
class Palette:
    """Hands out colours per bucket in first-seen order within each family (one palette per view)."""

    assigned: dict[str, str] = field(default_factory=dict)
    used: dict[str, int] = field(default_factory=dict)

    def colour(self, bucket: str) -> str:
        if bucket not in self.assigned:
            fam = family(bucket)
            shades = FAMILIES[fam]
            n = self.used.get(fam, 0)
            self.used[fam] = n + 1
            self.assigned[bucket] = shades[n % len(shades)]
        return self.assigned[bucket]

    def segments(self, record: Any) -> list[tuple[str, int, str]]:
        return [(b, t, self.colour(b)) for b, t in buckets(record)]

    def prime(self, records: Iterable[Any]) -> "Palette":
        for r in records:
            for b, _ in buckets(r):
                self.colour(b)
        return self


def history_tokens(record: Any) -> int:
    return sum(p.tokens for p in record.parts if p.kind in ("history", "skill"))
