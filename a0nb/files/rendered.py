"""What a prompt render returns: its text, and every file it read with where that file came from (provenance)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["Rendered", "Source"]


@dataclass(frozen=True)
class Source:
    """A file a render read, where it came from, and the lower copies it beat."""

    name: str
    path: Path
    label: str
    via: Literal["direct", "include", "original", "variables"]
    overrode: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Rendered:
    text: str
    sources: tuple[Source, ...]
    unknown: tuple[str, ...]

    def __str__(self) -> str:
        return self.text
