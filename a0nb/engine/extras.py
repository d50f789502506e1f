"""The text an extras extension puts in `loop_data.extras_*` on every step: `agent.read_prompt(name, **values)`
stripped, reused (one entry per prompt name, in the agent's PromptMemo) while the values (scalars, compared
with their class), the project's variables, the prompt files and their variables loaders are as they were.
A `read_prompt` start/end extension runs on every call, so while one exists the prompt is read every time,
as before."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from a0nb.files.extensible import function_point

if TYPE_CHECKING:
    from a0nb.engine.agent import Agent

__all__ = ["extra_text"]

_SCALARS = frozenset((str, int, float, bool, type(None)))  # (exactly these: 1, 1.0 and True render differently)
_READ_PROMPT: list[str] = []  # the implicit point of Agent.read_prompt (worked out at the first call)


def _read_prompt_point() -> str:
    from a0nb.engine.agent import Agent  # (the agent module imports this one's importers)

    _READ_PROMPT.append(function_point(Agent.read_prompt))
    return _READ_PROMPT[0]


def extra_text(agent: "Agent", name: str, /, **values: Any) -> str:
    """`agent.read_prompt(name, **values).strip()`, reused while nothing it depends on changed."""
    point = _READ_PROMPT[0] if _READ_PROMPT else _read_prompt_point()
    classes = tuple(map(type, values.values()))  # (the key is made in C: no Python call per value)
    hooked = agent.extensions.hooks.get(point)
    if hooked is None:  # (not known since the last change of the extensions: asked once)
        hooked = agent.extensions.hooked(point)
    if hooked or not _SCALARS.issuperset(classes):
        return agent.read_prompt(name, **values).strip()
    # (one entry per name: a value that changes every second replaces it rather than adding one)
    inputs = (tuple(values.items()), classes, agent.project.variables)
    return agent.prompts.reuse(("extras", name), inputs,  # type: ignore[no-any-return]
                               lambda: agent.read_prompt(name, **values).strip())
