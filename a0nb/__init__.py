"""a0nb: Agent Zero's agent loop inside a Jupyter kernel, with every model call inspectable.

Imports are lazy: `import a0nb` loads neither IPython, ipywidgets nor litellm."""
from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

__version__ = "0.1.0"

_EXPORTS: Mapping[str, str] = MappingProxyType({
    "Agent": "a0nb.engine.agent",
    "Turn": "a0nb.engine.turn",
    "Tool": "a0nb.engine.tool",
    "Response": "a0nb.engine.tool",
    "Extension": "a0nb.files.extensions",
    "extensible": "a0nb.files.extensions",
    "VariablesPlugin": "a0nb.files.prompts",
    "PromptEngine": "a0nb.files.prompts",
    "CallRecord": "a0nb.engine.records",
    "Part": "a0nb.engine.records",
    "A0Error": "a0nb.errors",
    "RepairableError": "a0nb.errors",
    "Diagnostics": "a0nb.diagnostics",
    "POINTS": "a0nb.files.points",
    "paths": "a0nb.files.api",
    "render_prompt": "a0nb.files.api",
    "trust": "a0nb.folder_trust",
    "UntrustedFolderWarning": "a0nb.folder_trust",
})

__all__ = sorted(_EXPORTS) + ["load_ipython_extension", "unload_ipython_extension", "__version__"]

if TYPE_CHECKING:
    from a0nb.engine.agent import Agent
    from a0nb.files.api import paths, render_prompt
    from a0nb.folder_trust import UntrustedFolderWarning, trust
    from a0nb.diagnostics import Diagnostics
    from a0nb.errors import A0Error, RepairableError
    from a0nb.files.extensions import Extension, extensible
    from a0nb.files.points import POINTS
    from a0nb.files.prompts import PromptEngine, VariablesPlugin
    from a0nb.engine.records import CallRecord, Part
    from a0nb.engine.tool import Response, Tool
    from a0nb.engine.turn import Turn


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'a0nb' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # a cache: the next lookup skips __getattr__ (same value every time)
    if module.startswith("a0nb.engine."):
        _wire_turn_display()
    return value


def _wire_turn_display() -> None:
    """The package root wires the layers: a Turn displays through the inspector (loaded on first display)."""
    from a0nb.engine.batch.result import MapResult
    from a0nb.engine.turn import Turn
    if Turn.display is None:
        Turn.display = _render_turn
    if MapResult.display is None:
        MapResult.display = _render_map


def _render_turn(turn: Any) -> Any:
    from a0nb.inspector import render_turn
    return render_turn(turn)


def _render_map(result: Any) -> Any:
    from a0nb.inspector import render_map
    return render_map(result)


def load_ipython_extension(ipython: Any) -> None:
    from a0nb.notebook.magics import load
    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from a0nb.notebook.magics import unload
    unload(ipython)
