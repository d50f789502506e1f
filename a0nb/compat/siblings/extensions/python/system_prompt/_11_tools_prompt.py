"""Upstream's `_11_tools_prompt.build_prompt`: async, the tools section as text (a0nb's bundled section
builder, whose sources the inspector keeps, returns a Section)."""
from __future__ import annotations

from typing import Any


async def build_prompt(agent: Any) -> str:
    engine = getattr(agent, "_engine", agent)
    for info in engine.extensions.resolve("system_prompt"):
        if info.name == "_11_tools_prompt" and info.path is not None:
            module = engine.loader.load(info.path, "extensions.system_prompt._11_tools_prompt", "extension")
            if module is not None and hasattr(module, "build_prompt"):
                return str(module.build_prompt(engine))
    return ""
