"""Composer.extras_message: the extras message's JSON and prompt are reused while the extras, the prompt file and
the project's variables are as they were and no extension hooks read_prompt; a change to any is seen at once."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from a0nb import Agent
from a0nb.testing import answer, tool_reply


def _write_old(path: Path, text: str) -> None:
    """Write, then make it look untouched for a while (recent writes are never reused)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    past = time.time() - 60
    os.utime(path, (past, past))
    os.utime(path.parent, (past, past))


def _agent(nb: Path, steps: int = 4) -> Agent:
    agent = Agent(nb, model=([tool_reply("noop")] * (steps - 1) + [answer("done")]) * 2,
                  settings={"frozen_time": "2026-01-31T09:30:00"})
    agent.register_tool(lambda: "ok", name="noop")
    return agent


def _expected(agent: Agent, call: Any) -> str:
    extras = {p.label.split(": ", 1)[1]: p.text for p in call.parts if p.kind == "extras"}
    return agent.read_prompt("agent.context.extras.md", extras=json.dumps(extras, ensure_ascii=False))


def test_each_step_sends_the_message_of_its_own_extras(nb: Path) -> None:
    agent = _agent(nb)
    values = iter(["a", "a", "b", "a", "a", "b", "b", "c"])
    agent.register_extension("message_loop_prompts_after",
                             lambda loop_data: loop_data.extras_temporary.__setitem__("probe", next(values)), name="probe")
    agent.ask("warm up")
    calls = agent.ask("go").calls
    assert [c.messages[-1]["content"].endswith(_expected(agent, c)) for c in calls] == [True] * len(calls)
    assert [json.loads(c.messages[-1]["content"].rsplit("\n", 1)[-1])["probe"] for c in calls] == ["a", "b", "b", "c"]


def test_an_edited_extras_prompt_is_seen(nb: Path) -> None:
    prompt = nb / "prompts" / "agent.context.extras.md"
    _write_old(prompt, "FIRST {{extras}}")
    agent = _agent(nb)
    steps: list[int] = []  # (armed after the warm-up)

    def edit() -> None:
        if len(steps) == 2:
            _write_old(prompt, "SECOND {{extras}}")
        steps.append(1)

    agent.ask("warm up")
    agent.register_extension("message_loop_prompts_after", edit, name="edit")
    calls = agent.ask("go").calls
    heads = [c.messages[-1]["content"].rsplit("\n", 1)[-1].split(" ", 1)[0] for c in calls]
    assert heads == ["FIRST", "FIRST", "FIRST", "SECOND"]  # (edited after the third step's refresh: seen at the next)


def test_a_read_prompt_extension_sees_the_extras_message_at_every_step(nb: Path) -> None:
    seen: list[str] = []

    def tag(data: dict[str, Any]) -> None:
        if data["args"][1] == "agent.context.extras.md":
            seen.append(data["args"][1])
            data["result"] = f"hooked {len(seen)}"

    agent = _agent(nb)
    agent.ask("warm up")  # (the reuse is on)
    agent.register_extension("_functions/agent/Agent/read_prompt/end", tag, name="tag")
    calls = agent.ask("go").calls
    assert len(seen) == len(calls) == 4
    assert [c.messages[-1]["content"].rsplit("\n", 1)[-1] for c in calls] == [f"hooked {i}" for i in range(1, 5)]
