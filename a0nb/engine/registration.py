"""Registering tools, extensions and Crystal Lattice plugins from Python (a notebook cell): the part of the
Agent's public API that adds to its catalogues without files. Mixed into `Agent`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from a0nb.engine.shared import Shared
from a0nb.engine.tool import ToolInfo, Tools
from a0nb.files.extensions import Extensions

if TYPE_CHECKING:
    from a0nb.providers.lattice_discovery import LatticeRegistry


class Registration:
    """`register_*` for an object holding `tools`, `extensions` and `shared` (the Agent)."""

    tools: Tools
    extensions: Extensions
    shared: Shared

    def register_tool(self, obj: Any, name: str | None = None) -> ToolInfo:
        return self.tools.register(obj, name)

    def register_extension(self, point: str, fn: Any, name: str | None = None) -> Any:
        return self.extensions.register(point, fn, name)

    # Crystal Lattice plugins defined in a notebook cell (AgentCore's registration names)
    def register_provider(self, cls: type, extensions: Sequence[type] = ()) -> Any:
        """A ProviderPlugin class: its `name` becomes a model prefix (`%a0 model echo:echo-1`)."""
        loaded = self._lattice_registry().register_provider(cls, extensions)
        self.shared.providers.clear()
        return loaded

    def register_feature(self, cls: type) -> Any:
        """A FeaturePlugin class, run with every Crystal Lattice provider and offered to completion."""
        loaded = self._lattice_registry().register_feature(cls)
        self.shared.providers.clear()
        return loaded

    def _lattice_registry(self) -> LatticeRegistry:
        return self.shared.lattice_registry()
