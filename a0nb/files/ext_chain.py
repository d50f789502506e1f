"""Running one extension point: the fire an agent makes at each point of its loop (`Agent.fire`: one Python
call when the point has no extension), each extension's call in run order, and the attribution of what it
set (which extension set each `loop_data.extras_*` key and appended each system section, for the inspector)."""
from __future__ import annotations

import asyncio
import inspect
from time import monotonic as _monotonic
from types import CoroutineType
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping, cast

from a0nb.errors import A0Error, RepairableError
from a0nb.files.ext_calls import as_coro, call_subset, resume, wrap

if TYPE_CHECKING:
    from a0nb.files.extensions import Bound, Extensions

__all__ = ["BARE", "CLASS", "DONE", "FUNCTION", "TIMED", "fire_point", "fire_point_sync", "run_chain", "run_chain_sync"]

# How a bound chain entry is called (decided once, when the chain is bound): an Extension class or a registered
# function straight from the chain's loop, or through Extensions._run (a user file: timed, maybe in a worker).
# BARE: an Extension class that keeps the base __init__; its fresh instance is made and given `agent` and
# `kwargs` as that __init__ gives them, without the call (`_new`, in C)
CLASS, FUNCTION, TIMED, BARE = 0, 1, 2, 3
_new: Callable[[Any], Any] = object.__new__


class _Done(tuple):  # type: ignore[type-arg]
    """What a fire returns when its point has no extension: awaiting it ends at once without a Python frame
    (`await` calls tuple.__iter__ on an empty tuple), and it can be awaited any number of times."""

    __slots__ = ()
    __await__ = tuple.__iter__


DONE = cast("Awaitable[None]", _Done())
_LIMIT = getattr(asyncio, "timeout", None)  # (Python 3.11 on: a time limit without a task of its own)
_LIMIT_AT = getattr(asyncio, "timeout_at", None)
_NOTHING: Mapping[str, Any] = {}
_NONE = ((_NOTHING, _NOTHING),)  # (no extras yet, as an extension found them)


def fire_point(agent: Any, point: str, **kwargs: Any) -> Awaitable[None]:
    """`Agent.fire`: count the fire, find the point's bound chain (a dict lookup while nothing changed) and
    return what runs it, awaited by the caller. (Extensions._fired does the same for `Extensions.call`;
    this is the loop's path, kept to one frame.)"""
    ext = agent.extensions
    stats = ext.stats
    try:
        stats.counts[point] += 1
    except KeyError:
        stats.counts[point] = 1
    if stats.trace is not None:
        stats.trace.append(point)
    try:
        chain = ext.bound[point]
    except KeyError:
        chain = ext.bind(point)
    return run_chain(ext, chain, point, agent, kwargs) if chain else DONE


def fire_point_sync(agent: Any, point: str, **kwargs: Any) -> None:
    """`Agent.fire_sync`: as `fire_point`, for the synchronous points."""
    ext = agent.extensions
    stats = ext.stats
    try:
        stats.counts[point] += 1
    except KeyError:
        stats.counts[point] = 1
    if stats.trace is not None:
        stats.trace.append(point)
    try:
        chain = ext.bound[point]
    except KeyError:
        chain = ext.bind(point)
    if chain:
        run_chain_sync(ext, chain, point, agent, kwargs)


async def run_chain(ext: "Extensions", chain: "Bound", point: str, agent: Any, kwargs: dict[str, Any]) -> None:
    """Call each extension of `chain` in order, awaiting the async ones (a user's under the time limit)."""
    ld: Any = kwargs["loop_data"] if "loop_data" in kwargs else None  # attribution needs the loop data
    # the system prompt's sections, when the point is given them as a list (their origins are recorded)
    sections = kwargs["system_prompt"] if ld is not None and "system_prompt" in kwargs else None
    if sections is not None and sections.__class__ is not list and not isinstance(sections, list):
        sections = None
    n_sections = len(sections) if sections is not None else 0
    # the extras as each extension found them (copies: their values are compared by identity), attributed
    # in one pass once the chain ends or stops
    before: list[tuple[Mapping[str, Any], Mapping[str, Any]]] | None = [] if ld is not None else None
    ended = extras = False
    try:
        for info, how, watched in chain:
            if before is not None:
                temp, pers = ld.extras_temporary, ld.extras_persistent
                if temp or pers:
                    before += ((temp.copy() if temp else _NOTHING, pers.copy() if pers else _NOTHING),)
                    extras = True
                else:
                    before += _NONE
            try:
                if how == BARE:
                    instance = _new(info.factory)
                    instance.agent, instance.kwargs = agent, {}
                    result = instance.execute(**kwargs)
                elif how == CLASS:
                    result = info.factory(agent=agent).execute(**kwargs)
                elif how == FUNCTION:
                    result = call_subset(info.factory, agent, kwargs)
                else:
                    result = ext._run(info, point, agent, kwargs)
                if result is not None and (result.__class__ is CoroutineType or inspect.isawaitable(result)):
                    if watched and ext.timeout:
                        if _LIMIT is None or _LIMIT_AT is None:
                            await asyncio.wait_for(as_coro(result), ext.timeout)
                        elif result.__class__ is CoroutineType:
                            # in this task, as upstream awaits it; the limit is armed only if the coroutine suspends
                            # (most never do, and a timer is a handle scheduled and cancelled per call), counted from
                            # its start all the same
                            started = _monotonic()
                            try:
                                pending = result.send(None)
                            except StopIteration:
                                pass
                            else:
                                loop = asyncio.get_running_loop()
                                async with _LIMIT_AT(loop.time() + ext.timeout - (_monotonic() - started)):
                                    await resume(result, pending)
                        else:
                            async with _LIMIT(ext.timeout):
                                await result
                    else:  # bundled hooks are part of the loop: no watchdog task per call
                        await result
            except asyncio.TimeoutError as exc:
                raise ext._overdue(info, point, "was stopped") from exc
            except (A0Error, RepairableError, asyncio.CancelledError, KeyboardInterrupt):
                raise
            except (Exception, SystemExit) as exc:  # sys.exit() in an extension must not end the agent's loop
                raise wrap(info, point, exc) from exc
            if sections is not None:  # the sections `info` appended (its own length: one len() per extension)
                n = len(sections)
                for i in range(n_sections, n):
                    ld.system_origin[i] = info
                n_sections = n
        ended = True
    finally:
        if before and (extras or ld.extras_temporary or ld.extras_persistent):  # (one that raised set nothing)
            _attribute_extras(chain, ld, before, len(before) if ended else len(before) - 1)


def run_chain_sync(ext: "Extensions", chain: "Bound", point: str, agent: Any, kwargs: dict[str, Any]) -> None:
    """`run_chain` for a synchronous point: an extension's awaitable result is settled by Extensions._settle_sync."""
    ld: Any = kwargs["loop_data"] if "loop_data" in kwargs else None
    # the system prompt's sections, when the point is given them as a list (their origins are recorded)
    sections = kwargs["system_prompt"] if ld is not None and "system_prompt" in kwargs else None
    if sections is not None and sections.__class__ is not list and not isinstance(sections, list):
        sections = None
    n_sections = len(sections) if sections is not None else 0
    before: list[tuple[Mapping[str, Any], Mapping[str, Any]]] | None = [] if ld is not None else None
    ended = extras = False
    try:
        for info, how, _watched in chain:
            if before is not None:
                temp, pers = ld.extras_temporary, ld.extras_persistent
                if temp or pers:
                    before += ((temp.copy() if temp else _NOTHING, pers.copy() if pers else _NOTHING),)
                    extras = True
                else:
                    before += _NONE
            try:
                if how == BARE:
                    instance = _new(info.factory)
                    instance.agent, instance.kwargs = agent, {}
                    result = instance.execute(**kwargs)
                elif how == CLASS:
                    result = info.factory(agent=agent).execute(**kwargs)
                elif how == FUNCTION:
                    result = call_subset(info.factory, agent, kwargs)
                else:
                    result = ext._run(info, point, agent, kwargs)
            except (A0Error, RepairableError, KeyboardInterrupt):
                raise
            except (Exception, SystemExit) as exc:
                raise wrap(info, point, exc) from exc
            if result is not None:
                ext._settle_sync(info, point, result)
            if sections is not None:
                n = len(sections)
                for i in range(n_sections, n):
                    ld.system_origin[i] = info
                n_sections = n
        ended = True
    finally:
        if before and (extras or ld.extras_temporary or ld.extras_persistent):
            _attribute_extras(chain, ld, before, len(before) if ended else len(before) - 1)


def _attribute_extras(chain: "Bound", ld: Any, before: list[tuple[Mapping[str, Any], Mapping[str, Any]]],
                      done: int) -> None:
    """Each extras key whose value is not the very object it was before an extension ran was set by that
    extension (the last one wins). `before`: the extras as each extension found them; the first `done`
    extensions ran to the end (what one of them left is what the next found, or the extras as they are now)."""
    origin, last = ld.extras_origin, len(before) - 1
    for i in range(done):
        temp, pers = before[i]
        if i < last:
            store, persistent = before[i + 1]
        else:
            store, persistent = ld.extras_temporary, ld.extras_persistent
        if store:
            for key in store:
                if key not in temp or temp[key] is not store[key]:
                    origin[key] = (chain[i][0], "temporary")
        if persistent:
            for key in persistent:
                if key not in pers or pers[key] is not persistent[key]:
                    origin[key] = (chain[i][0], "persistent")
