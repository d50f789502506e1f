"""Batch over inputs: `Agent.map` runs one fresh agent per item (this agent's folders, profile, model and
settings; an empty history) on threads, on Ray, or on any `concurrent.futures.Executor`."""
from __future__ import annotations

import concurrent.futures as cf
from typing import TYPE_CHECKING, Any, Callable, Literal, Union

from a0nb.engine.batch.items import MAX_PROMPT_CHARS, Template, as_items, prompts
from a0nb.engine.batch.result import MapResult, Progress
from a0nb.engine.batch.runner import Backend, ExecutorBackend, ThreadBackend, schedule
from a0nb.engine.batch.worker import AgentSpec
from a0nb.errors import ConfigError

if TYPE_CHECKING:
    from a0nb.engine.agent import Agent

__all__ = ["Executor", "MapResult", "Progress", "map_items"]

Executor = Union[Literal["threads", "ray"], cf.Executor]
MAX_CONCURRENCY = 256


def map_items(agent: Agent, items: Any, template: Template, *, concurrency: int = 4, executor: Executor = "threads",
              address: str | None = None, num_cpus: int | None = None, ray_options: dict[str, Any] | None = None,
              max_prompt_chars: int = MAX_PROMPT_CHARS,
              on_progress: Callable[[Progress], None] | None = None) -> MapResult:
    """See `Agent.map`. Every input is checked before the first item runs."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or not 1 <= concurrency <= MAX_CONCURRENCY:
        raise ConfigError(f"map: concurrency must be a whole number from 1 to {MAX_CONCURRENCY}, not {concurrency!r}")
    listed = as_items(items)
    texts = prompts(listed, template, max_prompt_chars)
    spec = AgentSpec.of(agent)
    backend = _backend(agent, spec, executor, concurrency, address, num_cpus, ray_options)
    progress = Progress(len(texts), listener=on_progress)
    turns, interrupted = schedule(backend, texts, concurrency, progress)
    for i, turn in enumerate(turns):
        turn.index = i + 1  # the item's place in the batch (each ran as turn 1 of its own agent)
    return MapResult(turns, listed, texts, executor=backend.name, elapsed=progress.elapsed, interrupted=interrupted)


def _backend(agent: Agent, spec: AgentSpec, executor: Any, concurrency: int, address: str | None,
             num_cpus: int | None, ray_options: dict[str, Any] | None) -> Backend:
    if address is not None and executor != "ray":
        raise ConfigError("map: address= is for executor='ray' (the Ray cluster to join)")
    if executor == "threads":
        shared = {"namespace": agent.namespace, "lattice": agent.shared.lattice, "approver": agent.shared.approver}
        return ThreadBackend(spec, concurrency, shared)
    if executor == "ray":
        from a0nb.engine.batch.ray_backend import RayBackend  # Ray is optional: imported only when asked for
        return RayBackend(spec, address=address, num_cpus=num_cpus, options=ray_options)
    if isinstance(executor, cf.Executor):
        return ExecutorBackend(executor, spec)
    raise ConfigError(f"map: executor must be 'threads', 'ray' or a concurrent.futures.Executor, not {executor!r}")
