"""a0nb: Agent Zero's agent loop inside a Jupyter kernel, with every model call inspectable.

Imports are lazy: `import a0nb` loads neither IPython, ipywidgets nor litellm."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Agent": "a0nb.agent",
    "Turn": "a0nb.turn",
    "Tool": "a0nb.tool",
    "Response": "a0nb.tool",
    "Extension": "a0nb.extensions",
    "extensible": "a0nb.extensions",
    "VariablesPlugin": "a0nb.prompts",
    "PromptEngine": "a0nb.prompts",
    "CallRecord": "a0nb.records",
    "Part": "a0nb.records",
    "A0Error": "a0nb.errors",
    "RepairableError": "a0nb.errors",
    "Diagnostics": "a0nb.diagnostics",
    "POINTS": "a0nb.points",
    "paths": "a0nb.api",
    "render_prompt": "a0nb.api",
}

__all__ = sorted(_EXPORTS) + ["load_ipython_extension", "unload_ipython_extension", "__version__"]

if TYPE_CHECKING:
    from .agent import Agent
    from .api import paths, render_prompt
    from .diagnostics import Diagnostics
    from .errors import A0Error, RepairableError
    from .extensions import Extension, extensible
    from .points import POINTS
    from .prompts import PromptEngine, VariablesPlugin
    from .records import CallRecord, Part
    from .tool import Response, Tool
    from .turn import Turn


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'a0nb' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def load_ipython_extension(ipython: Any) -> None:
    from .magics import load
    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .magics import unload
    unload(ipython)
