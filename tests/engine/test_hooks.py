"""The message_loop_prompts_after hooks of our design, compaction in the loop, and reattachment."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from a0nb import Agent
from a0nb.testing import answer, tool_reply


def _skill(folder: Path, name: str, description: str, body: str = "Body.", tags: str = "") -> None:
    d = folder / "skills" / name
    d.mkdir(parents=True)
    extra = f"tags: [{tags}]\n" if tags else ""
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n")


def _extras(call: Any) -> dict[str, Any]:
    return {p.label.split(": ", 1)[1]: p for p in call.parts if p.kind == "extras"}


def test_recall_relevant_skills_first_pass_only(nb: Path) -> None:
    for i in range(8):
        _skill(nb, f"csv-tool-{i}", "Work with csv files " + "x" * 300)
    agent = Agent(nb, model=[tool_reply("code_execution", runtime="python", code="1"), answer("ok")])
    turn = agent.ask("please read my csv data")
    first, second = (_extras(c) for c in turn.calls)
    text = first["relevant_skills"].text
    assert first["relevant_skills"].extension == "_63_recall_relevant_skills"
    assert text.count("\n- ") + text.startswith("- ") <= 6 and "csv-tool-0" in text
    assert "…" in text and "x" * 221 not in text
    assert "Body." not in text
    assert "relevant_skills" not in second


def test_recall_skipped_for_short_messages(nb: Path) -> None:
    _skill(nb, "greet", "say hi")
    agent = Agent(nb, model=[answer("hi")])
    assert "relevant_skills" not in _extras(agent.ask("hi").calls[0])


def test_agent_info_and_workdir_tree(nb: Path) -> None:
    (nb / "data.csv").write_text("a,b\n")
    (nb / "ignored.pyc").write_text("")
    agent = Agent(nb, model=[answer("ok")])
    extras = _extras(agent.ask("what is here?").calls[0])
    assert "number 0" in extras["agent_info"].text or "0" in extras["agent_info"].text
    tree = extras["project_file_structure"].text
    assert "data.csv" in tree and "ignored.pyc" not in tree
    assert extras["project_file_structure"].extension == "_75_include_workdir_extras"


def test_parallel_jobs_status_and_delivery(nb: Path) -> None:
    agent = Agent(nb, model=[tool_reply("slow_job", seconds=0.2),
                             tool_reply("code_execution", runtime="python", code="import time; time.sleep(0.4)"),
                             answer("collected")])

    async def slow_job(agent: Any, seconds: float) -> str:
        """Start a background job."""
        async def work() -> str:
            await asyncio.sleep(seconds)
            return "job output 42"
        job = agent.jobs.start("slow_job", work(), note="sleeping")
        return f"started {job.id}"

    agent.register_tool(slow_job)
    turn = agent.ask("run it in the background")
    assert "parallel_jobs" in _extras(turn.calls[1])
    assert "job-1" in _extras(turn.calls[1])["parallel_jobs"].text
    results = [m.content for m in agent.history.current.messages if m.kind == "tool_result"]
    assert any("job output 42" in str(r) for r in results)
    assert "parallel_jobs" not in _extras(turn.calls[2])


def test_compaction_and_skill_reattached_once(nb: Path) -> None:
    _skill(nb, "big-skill", "A large skill about reporting", body="Rule. " * 300)
    filler = "lorem ipsum dolor sit amet " * 40
    replies = [tool_reply("skills_tool:load", skill_name="big-skill"), answer("loaded")]
    for i in range(14):
        replies += [tool_reply("code_execution", runtime="python", code=f"'{filler}'"), answer(f"step {i}")]
    agent = Agent(nb, model=replies, settings={"ctx_length": 6000, "history_share": 0.5})
    events: list[dict[str, Any]] = []
    compactions: list[Any] = []
    agent.register_extension("skills_reattached", lambda skills, tokens, budget: events.append(
        {"skills": skills, "tokens": tokens, "budget": budget}), name="spy")
    agent.register_extension("history_compacted", lambda event: compactions.append(event), name="spy2")
    agent.ask("load the big skill")
    budget = 3000
    for i in range(14):
        agent.ask(f"do step {i}")
        assert agent.history.tokens(agent.shared.counter) <= budget + 2000  # within budget before each prompt
        assert agent.history.validate() == []
    assert len(compactions) >= 2
    assert all(c.tokens_after <= c.budget for c in compactions)
    assert events, "the skill body was compacted away but never reattached"
    assert all(e["skills"] == ["big-skill"] and e["tokens"] <= 12_000 and e["budget"] == 12_000 for e in events)
    reattached = [m for m in agent.history.messages()
                  if (m.metadata.get("skill_instructions") or {}).get("source") == "skills_tool:reattach"]
    assert reattached, "no reattached skill message in history"
    meta = reattached[-1].metadata["skill_instructions"]
    assert meta["name"] == "big-skill" and meta["content_included"] is True and meta["path"].endswith("SKILL.md")
    # exactly once per compaction that removed it: never two visible copies at the same time
    for call in agent.calls:
        copies = [p for p in call.parts if p.kind == "skill"]
        assert len(copies) <= 1


def test_truncation_only_without_utility_model(nb: Path) -> None:
    filler = "word " * 3000
    agent = Agent(nb, model=[tool_reply("code_execution", runtime="python", code=f"'{filler}'"), answer("ok")],
                  settings={"ctx_length": 2000, "history_share": 0.5})
    turn = agent.ask("make a long output")
    [event] = turn.compactions
    assert event.mode == "truncation" and event.tokens_after <= event.budget


def test_compaction_uses_utility_model_and_records_it(nb: Path) -> None:
    filler = "word " * 800
    chat = []
    for i in range(6):
        chat += [tool_reply("code_execution", runtime="python", code=f"'{filler}{i}'"), answer(f"a{i}")]
    (nb / "util.yaml").write_text("\n".join(f"- 'summary number {i}'" for i in range(60)))
    agent = Agent(nb, model=chat, utility_model="scripted:util.yaml",
                  settings={"ctx_length": 5000, "history_share": 0.6})
    for i in range(6):
        agent.ask(f"q{i}")
    utility = [c for c in agent.calls if c.role == "utility"]
    assert utility and all(c.purpose == "compaction" for c in utility)
    assert any(e.mode == "utility" for t in agent.turns for e in t.compactions)
