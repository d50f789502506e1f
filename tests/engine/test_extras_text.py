"""extra_text: the extras extensions' prompt text is reused while nothing it depends on changed, and a change
to any of it (a value, its class, the prompt file, a project variable, a read_prompt extension) is seen at
once."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

from a0nb import Agent
from a0nb.ext import extra_text
from a0nb.testing import answer, tool_reply


def _extras(call: Any) -> dict[str, str]:
    return {p.label.split(": ", 1)[1]: p.text for p in call.parts if p.kind == "extras"}


def _write_old(path: Path, text: str) -> None:
    """Write, then make it look untouched for a while (recent writes are never reused)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    past = time.time() - 60
    os.utime(path, (past, past))
    os.utime(path.parent, (past, past))


def two_steps(nb: Path, change: Callable[[Agent], Any]) -> tuple[Any, Any, Agent]:
    agent = Agent(nb, model=[tool_reply("change"), answer("done")] * 2)
    armed: list[bool] = []
    agent.register_tool(lambda: (change(agent) if armed else None) and "" or "changed", name="change")
    agent.ask("warm up")
    armed.append(True)
    first, second = agent.ask("go").calls
    return first, second, agent


def counting_reads(agent: Agent) -> list[str]:
    names: list[str] = []
    real = agent.read_prompt
    agent.read_prompt = lambda name, **kw: names.append(name) or real(name, **kw)  # type: ignore[method-assign]
    return names


def test_an_unchanged_step_reads_no_extras_prompt_and_keeps_its_text(nb: Path) -> None:
    agent = Agent(nb, model=[tool_reply("noop"), answer("ok")] * 2, settings={"frozen_time": "2026-01-31T09:30:00"})
    agent.register_tool(lambda: "ok", name="noop")
    agent.ask("warm up")
    reads = counting_reads(agent)
    first, second = agent.ask("go").calls
    assert not [n for n in reads if n in ("agent.extras.agent_info.md", "agent.system.datetime.md",
                                          "agent.extras.workdir_structure.md")]
    assert _extras(first) == _extras(second)
    assert "agent number 0" in _extras(second)["agent_info"] and "09:30:00" in _extras(second)["current_datetime"]
    origins = {k: info.name for k, (info, _) in agent.loop_data.extras_origin.items()}
    assert origins["agent_info"] == "_70_include_agent_info" and origins["current_datetime"] == \
        "_60_include_current_datetime" and origins["project_file_structure"] == "_75_include_workdir_extras"


def test_a_new_value_is_seen(nb: Path) -> None:
    first, second, _ = two_steps(nb, lambda a: a.configure(preset="fast"))
    assert "preset" not in _extras(first)["agent_info"] and "(preset fast)" in _extras(second)["agent_info"]


def test_an_edited_prompt_file_is_seen(nb: Path) -> None:
    prompt = nb / "prompts" / "agent.extras.agent_info.md"
    _write_old(prompt, "FIRST agent {{number}}")
    first, second, _ = two_steps(nb, lambda a: _write_old(prompt, "SECOND agent {{number}}"))
    assert _extras(first)["agent_info"] == "FIRST agent 0" and _extras(second)["agent_info"] == "SECOND agent 0"


def test_a_changed_project_variable_is_seen(nb: Path) -> None:
    _write_old(nb / "prompts" / "agent.extras.agent_info.md", "region {{REGION}}")
    variables = nb / ".a0proj" / "variables.env"
    _write_old(variables, "REGION=eu\n")
    first, second, _ = two_steps(nb, lambda a: _write_old(variables, "REGION=us\n"))
    assert _extras(first)["agent_info"] == "region eu" and _extras(second)["agent_info"] == "region us"


def test_a_read_prompt_extension_runs_on_every_step(nb: Path) -> None:
    seen: list[str] = []

    def tag(data: dict[str, Any]) -> None:
        seen.append(data["args"][1])
        if data["args"][1] == "agent.extras.agent_info.md":
            data["result"] = f"hooked {len(seen)}"

    agent = Agent(nb, model=[tool_reply("noop"), answer("ok")] * 2)
    agent.register_tool(lambda: "ok", name="noop")
    agent.ask("warm up")  # (the reuse is on)
    agent.register_extension("_functions/agent/Agent/read_prompt/end", tag, name="tag")
    first, second = agent.ask("go").calls
    assert seen.count("agent.extras.agent_info.md") == 2
    assert _extras(first)["agent_info"] != _extras(second)["agent_info"]
    assert _extras(second)["agent_info"].startswith("hooked ")


def test_values_of_another_class_are_not_taken_for_equal_ones(nb: Path) -> None:
    _write_old(nb / "prompts" / "agent.extras.probe.md", "value {{v}}")
    agent = Agent(nb, model=[answer("ok")])
    agent.ask("warm up")
    texts = [extra_text(agent, "agent.extras.probe.md", v=v) for v in (1, 1, True, 1.0, "1", None)]
    assert texts == [agent.read_prompt("agent.extras.probe.md", v=v).strip() for v in (1, 1, True, 1.0, "1", None)]
    assert len(set(texts[1:5])) > 1


def test_each_agent_sees_its_own_folder_in_the_tree(tmp_path: Path) -> None:
    folders = [tmp_path / "one", tmp_path / "two"]
    agents = []
    for folder in folders:
        folder.mkdir()
        (folder / f"{folder.name}.txt").write_text("x")
        agents.append(Agent(folder, model=[answer("ok")] * 3))
    for _ in range(2):  # alternating: the folder text kept for the last workdir is not served to the other
        for folder, agent in zip(folders, agents):
            text = _extras(agent.ask("go").calls[0])["project_file_structure"]
            assert str(folder) in text and f"{folder.name}.txt" in text
            other = folders[1 - folders.index(folder)]
            assert str(other) not in text
