"""engine/section_memo: the `system_prompt` point's sections are taken whole from the last fire while every
extension at the point says, through `section_inputs`, that nothing they depend on changed; an extension
that says nothing, a `_functions` hook on a section builder, a feature template, a chain that suspends or
raises makes the point run at every step, as before. (The changes the bundled sections follow — prompt files,
loaders, variables, secrets, projects, tools — are tested in tests/files/test_prompt_memo.py.)"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from a0nb import Agent
from a0nb.errors import A0Error
from a0nb.ext import FeaturePlugin
from a0nb.testing import answer, tool_reply

STEPS = 4


def _old(path: Path, text: str) -> Path:
    """Write `path`, then make it and its folders look untouched for a while (recent files are never reused)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    past = time.time() - 60
    for p in [path, *path.parents][:4]:
        os.utime(p, (past, past))
    return path


def _agent(nb: Path, steps: int = STEPS) -> Agent:
    agent = Agent(nb, model=([tool_reply("noop", i=i) for i in range(steps - 1)] + [answer("done")]) * 3)
    agent.register_tool(lambda i=0: "ok", name="noop")
    return agent


def _systems(turn: Any) -> list[str]:
    return [str(c.messages[0]["content"]) for c in turn.calls]


def _extension(nb: Path, name: str, body: str) -> None:
    _old(nb / "extensions" / "system_prompt" / f"{name}.py", "from a0nb.ext import Extension, Section\n"
         "CALLS = []\n\n\nclass Mine(Extension):\n" + body)


def test_a_quiet_step_takes_the_sections_without_calling_the_chain(nb: Path) -> None:
    _extension(nb, "_50_mine", "    section_inputs = staticmethod(lambda agent: ('fixed',))\n\n"
               "    def execute(self, system_prompt=None, **kwargs):\n"
               "        CALLS.append(1)\n        system_prompt.append(Section(f'MINE {len(CALLS)}'))\n")
    agent = _agent(nb)
    agent.ask("warm up")
    fired = agent.extensions.stats.counts["system_prompt"]
    turn = agent.ask("go")
    systems = _systems(turn)
    assert len(systems) == STEPS and all(s == systems[0] for s in systems) and "MINE 1" in systems[0]
    assert agent.extensions.stats.counts["system_prompt"] == fired + STEPS  # counted as fired at every step
    # the origins of the reused sections are those of the first fire: the inspector names the same extensions
    first, last = turn.calls[0], turn.calls[-1]
    shown = [(p.label, p.text, p.source, p.extension) for p in first.parts if p.kind == "system"]
    assert shown == [(p.label, p.text, p.source, p.extension) for p in last.parts if p.kind == "system"]
    assert {p.extension for p in last.parts if p.kind == "system"} >= {"_10_main_prompt", "_11_tools_prompt", "_50_mine"}


def test_an_extension_without_section_inputs_runs_at_every_step(nb: Path) -> None:
    _extension(nb, "_50_mine", "    def execute(self, system_prompt=None, **kwargs):\n"
               "        CALLS.append(1)\n        system_prompt.append(Section(f'MINE {len(CALLS)}'))\n")
    systems = _systems(_agent(nb).ask("go"))
    assert [f"MINE {i}" in s for i, s in enumerate(systems, 1)] == [True] * STEPS


def test_changed_section_inputs_run_the_chain_again(nb: Path) -> None:
    _extension(nb, "_50_mine", "    section_inputs = staticmethod(lambda agent: (agent.settings.preset,))\n\n"
               "    def execute(self, system_prompt=None, **kwargs):\n"
               "        system_prompt.append(Section(f'PRESET {self.agent.settings.preset}'))\n")
    agent = Agent(nb, model=[tool_reply("switch"), tool_reply("switch"), answer("done")])
    agent.register_tool(lambda: agent.configure(preset="fast") and "" or "switched", name="switch")
    systems = _systems(agent.ask("go"))
    assert "PRESET fast" not in systems[0] and "PRESET fast" in systems[1] and systems[1] == systems[2]


def test_an_extension_saying_none_is_called_at_every_step(nb: Path) -> None:
    _extension(nb, "_50_mine", "    section_inputs = staticmethod(lambda agent: None)\n\n"
               "    def execute(self, system_prompt=None, **kwargs):\n"
               "        CALLS.append(1)\n        system_prompt.append(Section(f'MINE {len(CALLS)}'))\n")
    systems = _systems(_agent(nb).ask("go"))
    assert [f"MINE {i}" in s for i, s in enumerate(systems, 1)] == [True] * STEPS


def test_a_hook_on_a_bundled_section_builder_runs_at_every_step(nb: Path) -> None:
    agent = _agent(nb)
    agent.ask("warm up")  # (the sections are kept)
    info = next(i for i in agent.extensions.resolve("system_prompt") if i.name == "_13_skills_prompt")
    point = info.factory.execute.__globals__["build_prompt"].__a0_point__  # (extension files are not in sys.modules)
    seen: list[int] = []

    def tag(data: dict[str, Any]) -> None:
        seen.append(1)
        data["result"] = f"SKILLS HOOKED {len(seen)}"

    agent.register_extension(point + "/end", tag, name="tag")
    systems = _systems(agent.ask("go"))
    assert len(seen) == STEPS
    assert [f"SKILLS HOOKED {i}" in s for i, s in enumerate(systems, 1)] == [True] * STEPS


def test_a_feature_template_is_asked_at_every_step(nb: Path) -> None:
    asked: list[int] = []

    class Counting(FeaturePlugin):
        def init(self, config: Any, state: Any) -> Any:
            return state

        def finalize(self, finals: Any, natives: Any, state: Any) -> Any:
            return finals, natives, state

        def get_template(self, config: Any) -> str:
            asked.append(1)
            return f"TEMPLATE {len(asked)}"

    agent = _agent(nb)
    agent.register_feature(Counting)
    systems = _systems(agent.ask("go"))
    assert [f"TEMPLATE {i}" in s for i, s in enumerate(systems, 1)] == [True] * STEPS


def test_a_chain_that_suspends_is_run_at_every_step(nb: Path) -> None:
    _extension(nb, "_50_mine", "    section_inputs = staticmethod(lambda agent: ('fixed',))\n\n"
               "    async def execute(self, system_prompt=None, **kwargs):\n        import asyncio\n"
               "        await asyncio.sleep(0)\n"
               "        CALLS.append(1)\n        system_prompt.append(Section(f'MINE {len(CALLS)}'))\n")
    agent = _agent(nb)
    systems = _systems(agent.ask("go"))
    assert [f"MINE {i}" in s for i, s in enumerate(systems, 1)] == [True] * STEPS
    assert agent.prompts.recording is None  # the renders recorded for the chain stopped before it suspended


def test_a_raising_chain_leaves_nothing_half_done_and_the_next_ask_works(nb: Path) -> None:
    _extension(nb, "_50_mine", "    section_inputs = staticmethod(lambda agent: ('fixed',))\n\n"
               "    def execute(self, system_prompt=None, **kwargs):\n"
               "        CALLS.append(1)\n        if len(CALLS) == 2:\n            raise ValueError('broken once')\n"
               "        system_prompt.append(Section(f'MINE {len(CALLS)}'))\n")
    agent = Agent(nb, model=[answer("one"), answer("two"), answer("three")])
    assert agent.ask("first").text == "one"
    marker = nb / "extensions" / "system_prompt" / "_60_other.py"  # a new file: the chain is bound again
    _old(marker, "from a0nb.ext import Extension\n\n\nclass Other(Extension):\n"
         "    section_inputs = staticmethod(lambda agent: ())\n")
    with pytest.raises(A0Error, match="broken once"):
        agent.ask("second")
    assert agent.prompts.recording is None  # (the renders recorded for the failed fire stopped with it)
    turn = agent.ask("third")
    assert "MINE 3" in str(turn.calls[0].messages[0]["content"])
