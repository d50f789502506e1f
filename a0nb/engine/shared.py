"""What an agent and its subordinates share (the loop bridge, models, namespace, the record counter,
the loaded-skill ledger) and the `%config` settings layer that counts its changes."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from a0nb.diagnostics import Diagnostics
from a0nb.engine.bridge import Bridge
from a0nb.engine.tokens import TokenCounter
from a0nb.files.skills import SkillIndex
from a0nb.providers.base import Provider

if TYPE_CHECKING:
    from a0nb.providers.lattice_discovery import LatticeRegistry


class VersionedDict(dict):  # type: ignore[type-arg]
    """The `%config` settings layer: a dict that counts its changes, so settings re-resolve only then."""

    version = 0

    def _bump(self) -> None:
        self.version += 1

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self._bump()

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        self._bump()

    def update(self, *args: Any, **kwargs: Any) -> None:
        super().update(*args, **kwargs)
        self._bump()

    def pop(self, *args: Any) -> Any:
        self._bump()
        return super().pop(*args)

    def clear(self) -> None:
        super().clear()
        self._bump()


@dataclass
class Shared:
    """What an agent and its subordinates share: the loop bridge, models, namespace, records counter."""

    workdir: Path
    home: Path | None
    namespace: dict[str, Any]
    bridge: Bridge = field(default_factory=Bridge)
    providers: dict[str, Provider] = field(default_factory=dict)
    counter: TokenCounter = field(default_factory=TokenCounter)
    call_index: int = 0
    magic_settings: VersionedDict = field(default_factory=VersionedDict)
    approver: Callable[[str, str], bool] | None = None
    data: dict[str, Any] = field(default_factory=dict)  # chat-wide data for extensions
    loaded_skills: list[str] = field(default_factory=list)  # the loaded-skill ledger, oldest first
    skill_index: SkillIndex | None = None  # the parsed skills of the hierarchy (built on first use)
    lattice: "LatticeRegistry | None" = None  # Crystal Lattice plugins registered from a notebook cell
    plugin_sources_key: str | None = None  # the `plugin_sources` setting last loaded (reloaded when it changes)
    mcp: Any = None  # the MCPManager of this chat's MCP servers (engine/mcp), started lazily
    memories: dict[str, Any] = field(default_factory=dict)  # open memory stores by location (engine/memory)

    def skills(self, diagnostics: Diagnostics) -> SkillIndex:
        if self.skill_index is None:
            self.skill_index = SkillIndex(diagnostics)
        return self.skill_index

    def lattice_registry(self) -> "LatticeRegistry":
        if self.lattice is None:
            from a0nb.providers.lattice_discovery import LatticeRegistry  # rarely used: loaded on demand
            self.lattice = LatticeRegistry()
        return self.lattice
