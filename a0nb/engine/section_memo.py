"""The `system_prompt` point's sections, reused whole while nothing they depend on changed.

Each extension at the point may say what its sections depend on besides prompt files and their variables
loaders: `section_inputs(agent)`, a static method returning a tuple (compared with ==) or None ("call me").
When every extension in the chain says so, the chain's sections and their origins are kept in the agent's
PromptMemo with those inputs, the bound chain and the registry's version; the next fire with equal inputs,
unchanged prompt files and loaders that return what they did takes them without calling the chain (counted
as fired all the same). An extension without the method (a user's file, an Agent Zero one, a registered
function), a `_functions/...` extension on a function of an extension's module, or a chain that suspends
(an MCP server starting) makes every fire run the chain, as it always did."""
from __future__ import annotations

from typing import Any

from a0nb.files.ext_calls import resume
from a0nb.files.prompt_memo import MISS

__all__ = ["POINT", "chain_inputs", "fire_system_prompt"]

POINT = "system_prompt"
_KEY = ("sections", POINT)


def chain_inputs(agent: Any, chain: Any) -> tuple[Any, ...] | None:
    """Every extension's `section_inputs(agent)`, or None when one has none (or says None)."""
    keys = []
    for info, _how, _watched in chain:
        inputs = getattr(info.factory, "section_inputs", None)
        if inputs is None:
            return None
        key = inputs(agent)
        if key is None:
            return None
        keys.append(key)
    return tuple(keys)


async def fire_system_prompt(agent: Any, ld: Any, system: list[Any]) -> None:
    """Fire `system_prompt` with `system` and `ld` (its sections appended to `system`, their origins in
    `ld.system_origin`), or take what the last equal fire appended."""
    ext, memo = agent.extensions, agent.prompts.reuse
    chain = ext.bound.get(POINT)
    if chain is None:
        chain = ext.bind(POINT)
    keys = chain_inputs(agent, chain) if chain and memo.active else None
    if keys is None:
        await agent.fire(POINT, system_prompt=system, loop_data=ld)
        return
    inputs = (chain, ext.version, keys)
    hit = memo.lookup(_KEY, inputs)
    if hit is not MISS:
        ext.skipped(POINT, 1)
        system += hit[0]
        ld.system_origin.update(hit[1])
        return
    hooked = _hooked(ext, chain)
    outer = memo.begin()
    coro = agent.fire(POINT, system_prompt=system, loop_data=ld)
    try:
        pending = coro.send(None)  # (a chain of quick extensions ends here, in this step of the task)
    except StopIteration:
        suspended = False
    except BaseException:
        memo.end(outer)
        raise
    else:
        suspended = True
    renders = memo.end(outer)  # (before the task can yield: no other build's renders are recorded as ours)
    if suspended:
        await resume(coro, pending)
    elif not hooked:
        memo.store(_KEY, inputs, (tuple(system), dict(ld.system_origin)), renders)


def _hooked(ext: Any, chain: Any) -> bool:
    """Whether a function of an extension's module (its `build_prompt`, say) has `_functions/...` extensions,
    which run at every call. (Extension files are loaded outside sys.modules: the module is found through
    the globals of the class's own functions.)"""
    for info, _how, _watched in chain:
        for value in _module_globals(info.factory).values():
            point = getattr(value, "__a0_point__", None)
            if point.__class__ is str and ext.hooked(point):
                return True
    return False


def _module_globals(cls: Any) -> dict[str, Any]:
    for value in vars(cls).values() if isinstance(cls, type) else ():
        found = getattr(getattr(value, "__func__", value), "__globals__", None)
        if isinstance(found, dict):
            return found
    return {}
