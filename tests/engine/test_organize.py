"""organize_history (a0nb.engine.organize) before each prompt: while the bound of the history's length
keeps it within budget no token is counted exactly; the decision to compact is the exact count's, at the
same step, whatever changed in between (messages added, a message edited, a topic summarised)."""
from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a0nb import Agent
from a0nb.engine.history import History
from a0nb.engine.organize import at_most, within_budget
from a0nb.engine.tokens import TokenCounter, approximate_tokens, fallback_token_count
from a0nb.testing import answer, tool_reply

TEXTS = ["", "a", "ai: hello", " " * 50, "1234567890" * 20, "<|endoftext|>" * 5, "naïve café", "日本語のテキスト",
         "🙂" * 30, "\ud800 lone", "mixed ascii and 🙂 emoji " * 10, json.dumps({"tool_name": "x", "args": {"a": 1}})]


@pytest.mark.parametrize("text", TEXTS)
def test_the_bound_is_never_below_the_count(text: str) -> None:
    assert at_most(text) >= approximate_tokens(text)
    assert at_most(text) >= int(1.1 * fallback_token_count(text))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_the_bound_is_never_below_the_count_for_any_text(text: str) -> None:
    assert at_most(text) >= approximate_tokens(text)
    assert at_most(text) >= int(1.1 * fallback_token_count(text))


def test_within_budget_answers_as_the_exact_count_does() -> None:
    history, counter = History(), TokenCounter()
    for i in range(40):
        history.add(i % 2 == 1, {"text": "some words 🙂 " * (i + 1)})
        if i % 7 == 6:
            history.new_topic()
        exact = history.tokens(TokenCounter(lambda t: approximate_tokens(t)))  # (another rule: no shared caches)
        for budget in (exact - 1, exact, exact + 1, 2 * exact, 10 * exact):
            assert within_budget(history, counter, budget) == (exact <= budget)
    first = history.topics[0].messages[0]
    first.content = {"text": "grown " * 5000}  # an edit, not an addition
    exact = history.tokens(TokenCounter(lambda t: approximate_tokens(t)))
    assert not within_budget(history, counter, exact - 1) and within_budget(history, counter, exact)


def _session(counter: TokenCounter | None, edit: bool = False) -> tuple[list[Any], dict[str, Any], list[int]]:
    """A scripted turn on a small budget: compaction happens partway; with `edit` a tool makes an old
    message huge by assignment. Returns (compaction events, history, at which steps history shrank)."""
    replies = [tool_reply("grow", i=i) for i in range(12)] + [answer("done")]
    agent = Agent(".", model=replies, settings={"ctx_length": 2000, "history_share": 0.5})
    if counter is not None:
        agent.shared.counter = counter
    sizes: list[int] = []

    def grow(i: int = 0) -> str:
        sizes.append(len(agent.history.messages()))
        if edit and i == 5:
            agent.history.messages()[0].content = "huge " * 2000
        return "result text " * 60
    agent.register_tool(grow, name="grow")
    agent.ask("start")
    events = [(e.tokens_before, e.tokens_after) for e in agent.data.get("compactions", [])]
    shrank = [i for i, (a, b) in enumerate(zip(sizes, sizes[1:])) if b < a + 2]
    return events, agent.history.to_dict(), shrank


@pytest.mark.parametrize("edit", [False, True])
def test_a_session_compacts_at_the_same_steps_as_with_exact_counts(nb: Any, monkeypatch: Any, edit: bool) -> None:
    monkeypatch.chdir(nb)
    bounded = _session(None, edit)
    exact = _session(TokenCounter(lambda t: approximate_tokens(t)), edit)  # another rule: always counted exactly
    assert bounded[0], "the session is meant to compact"
    assert bounded == exact


def test_a_smaller_context_set_mid_turn_compacts_at_the_next_step(nb: Any) -> None:
    agent = Agent(nb, model=[tool_reply("shrink"), answer("done")], settings={"ctx_length": 100_000})
    for i in range(10):
        agent.history.add(i % 2 == 1, "words and more words " * 40)
    agent.register_tool(lambda: agent.configure(ctx_length=600) or "ok", name="shrink")
    agent.ask("go")
    events = agent.data.get("compactions", [])
    assert len(events) == 1 and events[0].tokens_after <= 420


def test_a_history_also_counted_exactly_elsewhere_each_step_is_counted_exactly_from_then_on() -> None:
    """(A bound and an exact count share each message's cache slot: measuring both every step would redo
    every message every step, so the bound gives way.)"""
    from a0nb.engine.organize import _AT_MOST
    history, counter = History(), TokenCounter()
    for i in range(100):
        history.add(i % 2 == 1, f"message {i}")
    assert within_budget(history, counter, 10**9)
    history.add(False, "one more")
    before = _AT_MOST.counted
    assert within_budget(history, counter, 10**9)
    assert _AT_MOST.counted - before == 1  # only the new message is measured
    history.tokens(TokenCounter())  # an exact count elsewhere
    history.add(True, "and another")
    assert within_budget(history, counter, 10**9)  # the bound had to measure everything again: exact from now
    before = _AT_MOST.counted
    history.add(False, "last")
    assert within_budget(history, counter, 10**9) and not within_budget(history, counter, 10)
    assert _AT_MOST.counted == before


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("role", ["ai", "user"])
def test_a_message_is_bounded_as_its_rendered_text_is(role: str, text: str) -> None:
    # Message.tokens gives the counter the role and the text apart: the bound of the two is the joined text's
    from a0nb.engine.organize import _AtMost
    joined = f"{role}: {text}"
    assert _AtMost(at_most).count_rendered(role, text) == at_most(joined)
    assert TokenCounter().count_rendered(role, text) == approximate_tokens(joined)
