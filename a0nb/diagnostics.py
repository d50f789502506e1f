"""Diagnostics: every load or render problem, with the file, the line where known, the reason
and the fix. Collected per agent; nothing fails silently."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    area: str  # "prompt", "extension", "tool", "skill", "plugin", "profile", "project", "model", ...
    message: str
    path: str | None = None
    line: int | None = None
    fix: str = ""

    def __str__(self) -> str:
        where = self.path or "<a0nb>"
        if self.line is not None:
            where += f":{self.line}"
        text = f"{where}: {self.severity}: {self.message}"
        return f"{text} (fix: {self.fix})" if self.fix else text


class Diagnostics:
    """An ordered, de-duplicated collection of diagnostics."""

    def __init__(self) -> None:
        self._items: dict[tuple[object, ...], Diagnostic] = {}

    def add(
        self,
        severity: Severity,
        area: str,
        message: str,
        path: object = None,
        line: int | None = None,
        fix: str = "",
    ) -> Diagnostic:
        diag = Diagnostic(severity, area, message, None if path is None else str(path), line, fix)
        key = (diag.area, diag.path, diag.line, diag.message)
        self._items.setdefault(key, diag)
        return self._items[key]

    def extend(self, other: "Diagnostics") -> None:
        for d in other:
            self.add(d.severity, d.area, d.message, d.path, d.line, d.fix)

    def clear(self, area: str | None = None) -> None:
        if area is None:
            self._items.clear()
        else:
            self._items = {k: d for k, d in self._items.items() if d.area != area}

    def of(self, area: str) -> list[Diagnostic]:
        return [d for d in self._items.values() if d.area == area]

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Diagnostics({len(self)} items)"

    def text(self) -> str:
        return "\n".join(str(d) for d in self) or "no diagnostics"
