"""Provider fault injection: 50-turn scripted sessions with rate limits, timeouts, 500s, streams cut midway,
context-window and auth errors at seeded random points; every turn completes or fails cleanly, history
stays consistent, no earlier call record is lost, and a normal turn works right after each fault."""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from a0nb import Agent
from a0nb.errors import A0Error, ModelError
from a0nb.testing import answer, tool_reply

TURNS = 50
SEEDS = (7, 1234, 99991)
TRANSIENT = ("rate_limit", "timeout", "server")
SETTINGS: dict[str, Any] = {"backoff": 0, "retries": 2, "code_timeout": 1}


@dataclass
class Plan:
    """One turn's script and what it must end as: 'ok', 'error', or 'either' (context window: retried or not)."""

    script: list[Any]
    expect: str
    label: str

    @property
    def faults(self) -> int:
        return sum(1 for item in self.script if isinstance(item, dict) and item.get("error"))


def fault_plan(rng: random.Random, turn: int) -> Plan:
    """A seeded choice of fault, optionally after a tool step so the fault lands mid-turn."""
    prefix = [tool_reply("code_execution", runtime="python", code=f"step_{turn} = {turn}")] if rng.random() < 0.5 else []
    done = answer(f"turn {turn} done")
    kind = rng.choice(["none", "none", "retried", "exhausted", "break", "context_window", "auth"])
    if kind == "none":
        return Plan(prefix + [done], "ok", "none")
    if kind == "retried":  # one transient error before the first chunk: retried, the turn completes
        return Plan(prefix + [{"error": rng.choice(TRANSIENT)}, done], "ok", "retried")
    if kind == "exhausted":  # retries + 1 transient errors in a row: a clean ModelError
        errors = [{"error": rng.choice(TRANSIENT)} for _ in range(SETTINGS["retries"] + 1)]
        return Plan(prefix + errors, "error", "exhausted")
    if kind == "break":  # the stream is cut halfway through the reply
        return Plan(prefix + [{"error": "break", "content": done}], "error", "break")
    if kind == "context_window":  # compaction then one retry, or a clean error when nothing could be compacted
        return Plan(prefix + [{"error": "context_window"}, done], "either", "context_window")
    return Plan(prefix + [{"error": "auth"}], "error", "auth")


def snapshot(agent: Agent) -> list[tuple[int, str, str | None]]:
    return [(c.index, c.response, c.error) for c in agent.calls]


def check_nothing_lost(agent: Agent, before: list[tuple[int, str, str | None]]) -> None:
    now = {c.index: (c.index, c.response, c.error) for c in agent.calls}
    for rec in before:
        assert now.get(rec[0]) == rec, f"call record {rec[0]} changed or vanished after a fault"


def check_turn_records(agent: Agent, index: int, plan: Plan, outcome: Any) -> None:
    calls = [c for c in agent.calls if c.turn == index and c.role == "chat"]
    assert calls, "the turn left no call record"
    for c in calls:
        assert c.response or c.error, f"call {c.index} has neither a response nor an error"
    if plan.script and isinstance(plan.script[0], str) and len(calls) > 1:
        assert calls[0].tool_request and calls[0].tool_request["tool_name"] == "code_execution"
        assert calls[0].tool_result is not None, "the tool step before the fault lost its result"
    if isinstance(outcome, A0Error):
        assert getattr(outcome, "turn", None) is not None and outcome.turn.calls, "the failed turn lost its calls"
        assert calls[-1].error, "the failing call does not say why"


def run_turn(agent: Agent, text: str) -> Any:
    try:
        return agent.ask(text)
    except A0Error as exc:
        return exc


@pytest.mark.parametrize("seed", SEEDS)
def test_fifty_turns_with_faults(seed: int, nb: Path, fault_tally: Any) -> None:
    rng = random.Random(seed)
    agent = Agent(nb, model=[answer("warm-up")], settings=SETTINGS, entry_points=False)
    try:
        agent.ask("warm up")
        injected = 0
        for turn in range(1, TURNS + 1):
            plan = fault_plan(rng, turn)
            agent.configure(model=plan.script)
            before = snapshot(agent)
            index = len(agent.turns) + 1
            with fault_tally.trial(plan.faults):
                outcome = run_turn(agent, f"turn {turn}")
                if isinstance(outcome, A0Error):
                    assert isinstance(outcome, ModelError), f"{plan.label}: unexpected {outcome!r}"
                    assert plan.expect in ("error", "either"), f"{plan.label}: the turn should have completed: {outcome}"
                else:
                    assert plan.expect in ("ok", "either"), f"{plan.label}: the turn should have failed"
                    assert outcome.text == f"turn {turn} done"
                assert agent.history.validate() == [], agent.history.validate()
                check_nothing_lost(agent, before)
                check_turn_records(agent, index, plan, outcome)
                if plan.faults:  # the next turn works, straight after the fault
                    agent.configure(model=[answer("recovered")])
                    recovered = agent.ask("are you there?")
                    assert recovered.ok and recovered.text == "recovered"
                    assert agent.history.validate() == []
            injected += plan.faults
        assert injected >= 20, f"seed {seed} injected only {injected} faults"
    finally:
        agent.shared.bridge.close()
