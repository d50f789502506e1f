"""One item of a batch: a fresh agent with the mapping agent's configuration (folders, profile, model,
settings) and an empty history answers one prompt. The same code runs in a thread, a process or a Ray task."""
from __future__ import annotations

import os
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from a0nb.engine.bridge import Bridge
from a0nb.engine.records import CallRecord
from a0nb.engine.turn import Turn
from a0nb.errors import A0Error

if TYPE_CHECKING:
    from a0nb.engine.agent import Agent

__all__ = ["AgentSpec", "SerialBridge", "Live", "run_item", "turn_from_dict", "turn_to_dict"]


@dataclass(frozen=True)
class AgentSpec:
    """What makes an agent this agent, in plain data (it travels to processes and Ray workers)."""

    workdir: str
    home: str | None
    profile: str
    model_list: list[Any] | None
    arguments: dict[str, Any]   # the call-argument settings layer (Agent(settings=...), agent.configure)
    magic: dict[str, Any]       # the `%config A0.*` layer (what `%a0 model` and `%config` set)
    entry_points: bool = True
    env: dict[str, str] = field(default_factory=dict)  # A0NB_* variables for workers in other environments

    @classmethod
    def of(cls, agent: Agent) -> AgentSpec:
        env = {k: v for k, v in os.environ.items() if k.startswith(("A0NB_", "LITELLM_"))}
        return cls(str(agent.workdir), str(agent.shared.home) if agent.shared.home else None, agent.profile,
                   list(agent.models.model_list) if agent.models.model_list else None,
                   dict(agent.config.arguments), dict(agent.shared.magic_settings),
                   agent.hierarchy.entry_points, env)

    def build(self, workdir: str | None = None, **shared: Any) -> Agent:
        """A fresh agent; `shared`: in-process extras for the Shared (namespace, bridge, lattice, approver)."""
        from a0nb.engine.agent import Agent  # the Agent module imports this package (Agent.map)
        from a0nb.engine.shared import Shared
        folder = Path(workdir or self.workdir).resolve()
        namespace = shared.pop("namespace", None)
        state = Shared(folder, Path(self.home) if self.home else None, namespace if namespace is not None else {},
                       **shared)
        state.magic_settings.update(self.magic)
        agent = Agent(folder, self.model_list, profile=self.profile, settings=dict(self.arguments),
                      entry_points=self.entry_points, _shared=state)
        return agent


class SerialBridge(Bridge):
    """The items of one batch run Python on their own threads, but stdout capture (and the namespace a
    notebook's code expects to own) are process-wide: code runs one item at a time, model calls in parallel."""

    def __init__(self, lock: threading.Lock) -> None:
        super().__init__()
        self._serial = lock

    async def on_main(self, fn: Callable[..., Any], *args: Any) -> Any:
        def serial(*a: Any) -> Any:
            with self._serial:
                return fn(*a)
        return await super().on_main(serial, *args)


class Live:
    """The agents running in this process, by item index, so an interrupt reaches them (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._agents: dict[int, Agent] = {}
        self._stopped: set[int] = set()

    def add(self, index: int, agent: Agent) -> bool:
        """False when the item was interrupted before its agent existed (it then never starts)."""
        with self._lock:
            self._agents[index] = agent
            return index not in self._stopped

    def remove(self, index: int) -> None:
        with self._lock:
            self._agents.pop(index, None)

    def interrupt(self, index: int) -> None:
        with self._lock:
            self._stopped.add(index)
            agent = self._agents.get(index)
        if agent is not None:
            agent.interrupt()


def run_item(spec: AgentSpec, index: int, prompt: str, *, workdir: str | None = None, live: Live | None = None,
             prepare: Callable[[Agent], None] | None = None, **shared: Any) -> Turn:
    """The item's Turn; an error (or an interrupt) is the Turn's `error`, never an exception.
    `prepare`: called with the fresh agent before it answers."""
    try:
        agent = spec.build(workdir, **shared)
        if prepare is not None:
            prepare(agent)
    except Exception as exc:  # noqa: BLE001 - a per-item failure: the batch goes on
        return Turn(1, prompt, error=f"the agent for this item could not start: {type(exc).__name__}: {exc}")
    try:
        if live is not None and not live.add(index, agent):
            return Turn(1, prompt, error="cancelled: interrupted before it started", interrupted=True)
        try:
            return agent.ask(prompt)
        except A0Error as exc:
            turn = agent.turns[-1] if agent.turns else Turn(1, prompt)
            turn.error = turn.error or str(exc)
            return turn
        except Exception as exc:  # noqa: BLE001 - a bug in a tool or extension loses this item only
            turn = agent.turns[-1] if agent.turns else Turn(1, prompt)
            turn.error = f"{type(exc).__name__}: {exc}\n" + "".join(traceback.format_tb(exc.__traceback__)[-3:])
            return turn
    finally:
        if live is not None:
            live.remove(index)
        _close(agent)


def _close(agent: Agent) -> None:
    agent.jobs.cancel_all()
    if agent.shared.mcp is not None:
        agent.shared.mcp.close()
    agent.shared.bridge.close()


def turn_to_dict(turn: Turn) -> dict[str, Any]:
    """A Turn as plain data (what a process or a Ray task sends back)."""
    return {"index": turn.index, "message": turn.message, "text": turn.text, "error": turn.error,
            "interrupted": turn.interrupted, "expansions": list(turn.expansions),
            "calls": [c.to_dict() for c in turn.calls]}


def turn_from_dict(data: dict[str, Any]) -> Turn:
    data = dict(data)
    data["calls"] = [CallRecord.from_dict(c) for c in data.get("calls", [])]
    return Turn(**data)
