"""Agent Zero's `helpers.extension`: `Extension` (its `self.agent` is the upstream view of the a0nb agent),
`extensible` (a0nb's implicit `_functions/...` points) and `call_extensions_async/sync`."""
from __future__ import annotations

from typing import Any

from a0nb.ext import Extension as _Extension
from a0nb.ext import extensible

__all__ = ["Extension", "extensible", "call_extensions_async", "call_extensions_sync"]


class Extension(_Extension):
    """Base class of Agent Zero extension files; a0nb runs them at its points like its own."""

    def __init__(self, agent: Any = None, **kwargs: Any) -> None:
        from a0nb.compat.agent import enter
        super().__init__(agent=enter(agent) if agent is not None else None, **kwargs)

    def execute(self, **kwargs: Any) -> Any:
        return None


def _engine(agent: Any) -> Any:
    return getattr(agent, "_engine", agent)


async def call_extensions_async(extension_point: str, agent: Any = None, **kwargs: Any) -> None:
    """Run the extensions of a point for `agent` (Agent Zero's signature); without an agent, none run."""
    if agent is None:
        return
    engine = _engine(agent)
    await engine.extensions.call(extension_point, engine, **kwargs)


def call_extensions_sync(extension_point: str, agent: Any = None, **kwargs: Any) -> None:
    if agent is None:
        return
    engine = _engine(agent)
    engine.extensions.call_sync(extension_point, engine, **kwargs)
