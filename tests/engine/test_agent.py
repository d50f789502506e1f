"""The Agent's public API: reset() forgets the conversation and cancels background jobs; typed state
(compactor, tool prompt variables, the skill ledger) instead of string keys in `agent.data`."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from a0nb import Agent
from a0nb.testing import answer, tool_reply


def _job_agent(nb: Path, replies: list[Any]) -> Agent:
    agent = Agent(nb, model=replies)

    async def start_job(agent: Any) -> str:
        """Start a background job that runs until cancelled."""
        async def work() -> str:
            await asyncio.Event().wait()
            return "never"
        return f"started {agent.jobs.start('start_job', work(), note='waiting').id}"

    agent.register_tool(start_job)
    return agent


def test_reset_cancels_running_jobs(nb: Path) -> None:
    agent = _job_agent(nb, [tool_reply("start_job"), answer("started")])
    agent.ask("start a job")
    [job] = agent.jobs.snapshot()
    assert job.status == "running" and job.task is not None and not job.task.done()
    agent.reset()
    loop = job.task.get_loop()
    asyncio.run_coroutine_threadsafe(asyncio.wait([job.task]), loop).result(timeout=10)
    assert job.task.cancelled() and (job.status, job.result) == ("failed", "cancelled")
    assert [m.kind for m in agent.history.messages()] == ["ai"]  # only the initial greeting of agent_init
    assert agent.calls == [] and agent.turns == []


def test_reset_cancels_a_subordinates_jobs(nb: Path) -> None:
    agent = _job_agent(nb, [answer("hi")])
    sub = agent.subordinate_agent()

    async def start() -> Any:
        return sub.jobs.start("sub_job", asyncio.Event().wait()).task

    task = asyncio.run_coroutine_threadsafe(start(), agent.shared.bridge.loop).result(timeout=10)
    agent.reset()
    asyncio.run_coroutine_threadsafe(asyncio.wait([task]), task.get_loop()).result(timeout=10)
    assert task.cancelled() and agent.subordinate is None


def test_reset_keeps_typed_state_consistent(nb: Path) -> None:
    agent = Agent(nb, model=[answer("a"), answer("b")])
    assert agent.compactor is not None  # registered by the bundled agent_init extension
    agent.tool_prompt_kwargs["agent.system.tool.response.md"] = {"x": 1}
    agent.loaded_skills().append("some-skill")
    agent.data["user_key"] = 1
    agent.ask("one")
    agent.reset()
    assert agent.compactor is not None and agent.tool_prompt_kwargs == {}
    assert agent.loaded_skills() == [] and agent.data == {}
    assert agent.ask("two").text == "a"  # scripted models restart
    assert "_compactor" not in agent.data and not any(k.startswith("_") for k in agent.shared.data)
