"""The chat call's stream, delta by delta: an interrupt or an intervention sent mid-stream is taken at the
next delta; with no extension at the stream points the deltas skip the fires but the counts read the same;
an extension registered mid-stream gets the rest of the deltas."""
from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator, Callable

import pytest

from a0nb import Agent
from a0nb.errors import TurnInterrupted
from a0nb.providers.scripted import CHUNK
from a0nb.testing import answer

LONG = answer("a long answer, " * 12)  # many chunks before its closing brace


class _Midway:
    """Wraps the call's provider (set by a `chat_model_call_before` extension, as Agent Zero's call_data
    allows): runs `action` just before it yields chunk number `at` (counting from 0) of the first call."""

    def __init__(self, inner: Any, at: int, action: Callable[[], None]) -> None:
        self.inner, self.at, self.action, self.yielded = inner, at, action, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def stream(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> AsyncIterator[Any]:
        async for chunk in self.inner.stream(messages, state):
            if self.yielded == self.at:
                self.action()
            self.yielded += 1
            yield chunk


def _midway(agent: Agent, at: int, action: Callable[[], None]) -> list[_Midway]:
    wrapped: list[_Midway] = []

    def wrap(call_data: dict[str, Any]) -> None:
        if not wrapped:
            wrapped.append(_Midway(call_data["provider"], at, action))
            call_data["provider"] = wrapped[0]

    agent.register_extension("chat_model_call_before", wrap, name="midway")
    return wrapped


def test_an_interrupt_mid_stream_stops_at_the_next_delta_and_keeps_the_partial_reply(nb: Path) -> None:
    agent = Agent(nb, model=[LONG, answer("after the interrupt")])
    wrapped = _midway(agent, 3, agent.interrupt)
    with pytest.raises(TurnInterrupted):
        agent.ask("go")
    assert wrapped[0].yielded == 4  # the chunk after the interrupt reached the sink, which stopped there
    texts = [str(m.content) for m in agent.history.messages()]
    assert any(text == LONG[:3 * CHUNK] for text in texts)  # the three deltas streamed before it
    assert agent.ask("again").text == "after the interrupt"


def test_an_intervention_mid_stream_restarts_the_monologue_with_the_message(nb: Path) -> None:
    agent = Agent(nb, model=[LONG, answer("did the other thing")])
    _midway(agent, 2, lambda: agent.intervene("do the other thing"))
    turn = agent.ask("go")
    assert turn.text == "did the other thing"
    texts = [str(m.content) for m in agent.history.messages()]
    assert LONG[:2 * CHUNK] in texts and any("do the other thing" in text for text in texts)


def test_quiet_stream_points_are_counted_as_if_fired(nb: Path) -> None:
    replies = [{"content": LONG, "reasoning": "first think, then answer at length"}]
    traced, quiet = Agent(nb, model=list(replies)), Agent(nb, model=list(replies))
    traced.extensions.stats.trace = []  # a trace fires every delta one by one
    traced.ask("go")
    quiet.ask("go")
    counts = quiet.extensions.stats.counts
    assert counts == traced.extensions.stats.counts
    assert counts["response_stream_chunk"] == traced.extensions.stats.trace.count("response_stream_chunk") > 10
    assert counts["reasoning_stream_chunk"] == counts["reasoning_stream"] == 5


def test_a_stream_extension_registered_mid_stream_gets_the_rest_of_the_deltas(nb: Path) -> None:
    agent = Agent(nb, model=[LONG])
    seen: list[str] = []

    def collect(stream_data: dict[str, Any]) -> None:
        seen.append(stream_data["chunk"])

    _midway(agent, 4, lambda: agent.register_extension("response_stream_chunk", collect, name="collect"))
    turn = agent.ask("go")
    assert "".join(seen) == LONG[4 * CHUNK:] and turn.calls[0].response == LONG
    assert agent.extensions.stats.counts["response_stream_chunk"] == -(-len(LONG) // CHUNK)


_CHUNK_FILE = '''
from a0nb.ext import Extension


class Collect(Extension):
    def execute(self, stream_data=None, **kwargs):
        self.agent.collected.append(stream_data["chunk"])
'''


def test_a_stream_extension_added_between_calls_fires_at_the_next_call(nb: Path) -> None:
    """The quiet decision is kept per version of the chains: a file or a registration changes it."""
    agent = Agent(nb, model=[LONG, LONG, LONG, {"content": LONG, "reasoning": "0123456789"}])
    agent.collected = []  # type: ignore[attr-defined]
    agent.ask("quiet")
    assert agent.collected == []  # type: ignore[attr-defined]
    folder = nb / "extensions" / "response_stream_chunk"
    folder.mkdir(parents=True)
    (folder / "_50_collect.py").write_text(_CHUNK_FILE)
    agent.ask("a file listens")
    assert "".join(agent.collected) == LONG  # type: ignore[attr-defined]
    (folder / "_50_collect.py").unlink()
    agent.collected.clear()  # type: ignore[attr-defined]
    agent.ask("quiet again")
    assert agent.collected == []  # type: ignore[attr-defined]
    seen: list[str] = []
    agent.register_extension("reasoning_stream", lambda text: seen.append(text), name="thinking")
    agent.ask("a registration listens")
    assert seen == ["01234567", "0123456789"]
    chunks = -(-len(LONG) // CHUNK)
    assert agent.extensions.stats.counts["response_stream_chunk"] == 4 * chunks


TRAILING = answer("short") + " and then some words the early stop leaves out of the reply"
_REPLIES: list[Any] = [
    TRAILING,
    "",  # no delta at all: no checkpoint in the stream  # stops early, inside a chunk: the usage counts the chunks read up to the stop
    {"content": LONG, "reasoning": "first think, then answer at length"},
    "<think>plan the answer</think>" + answer("thought first"),
    "no JSON at all, a misformat the loop sends back",
    answer("done"),
]


def _turn(nb: Path, traced: bool, setup: Callable[[Agent], None] | None = None) -> tuple[Agent, list[Any]]:
    agent = Agent(nb, model=list(_REPLIES))
    if traced:
        agent.extensions.stats.trace = []  # every delta fires one by one: the stream is followed chunk by chunk
    if setup is not None:
        setup(agent)
    try:
        turns: list[Any] = [agent.ask("go").text]
    except TurnInterrupted:
        turns = ["interrupted"]
    while agent.models.provider("chat").remaining:  # type: ignore[attr-defined]
        turns.append(agent.ask("more").text)
    return agent, turns


def _seen(agent: Agent) -> list[Any]:
    return [(c.response, c.reasoning, c.usage, c.tool_request, c.error) for c in agent.calls] + \
        [str(m.content) for m in agent.history.messages()]


def test_replies_folded_in_one_run_read_as_when_followed_chunk_by_chunk(nb: Path) -> None:
    """With no stream extension the scripted chunks are folded in one run (no call per delta): the records, the
    history and the fire counts are the same as when each delta goes through the sink (a trace is kept)."""
    quiet, quiet_turns = _turn(nb, traced=False)
    traced, traced_turns = _turn(nb, traced=True)
    assert quiet_turns == traced_turns and _seen(quiet) == _seen(traced)
    assert quiet.calls[0].response == answer("short") and quiet.calls[0].usage["completion_tokens"] == \
        -(-len(answer("short")) // CHUNK) * CHUNK // 4
    assert quiet.calls[3].reasoning == "plan the answer"
    assert quiet.extensions.stats.counts == traced.extensions.stats.counts


def test_an_intervention_or_interrupt_waiting_when_the_run_starts_is_taken_at_its_first_delta(nb: Path) -> None:
    """As delta by delta: nothing of the reply is kept (it had not streamed yet when the checkpoint took it)."""
    def intervene(agent: Agent) -> None:
        def once(call_data: dict[str, Any]) -> None:
            if len(agent.calls) == 1:
                agent.intervene("do the other thing")
        agent.register_extension("chat_model_call_before", once, name="intervene")

    def interrupt(agent: Agent) -> None:
        agent.register_extension("chat_model_call_before", lambda: agent.interrupt() if len(agent.calls) == 1
                                 else None, name="interrupt")

    def intervene_at_empty(agent: Agent) -> None:
        def second(call_data: dict[str, Any]) -> None:
            if len(agent.calls) == 2:
                agent.intervene("do the other thing")
        agent.register_extension("chat_model_call_before", second, name="intervene")
        agent.register_extension("chat_model_call_after", lambda: agent.collected.append(len(agent.calls)),
                                 name="after")
        agent.collected = []  # type: ignore[attr-defined]

    quiet, quiet_turns = _turn(nb, False, intervene_at_empty)
    traced, traced_turns = _turn(nb, True, intervene_at_empty)
    assert quiet_turns == traced_turns and _seen(quiet) == _seen(traced)
    assert quiet.collected == traced.collected and 2 in quiet.collected  # type: ignore[attr-defined]
    for setup in (intervene, interrupt):
        quiet, quiet_turns = _turn(nb, False, setup)
        traced, traced_turns = _turn(nb, True, setup)
        assert quiet_turns == traced_turns and _seen(quiet) == _seen(traced)
        texts = [str(m.content) for m in quiet.history.messages()]
        assert not any(text and TRAILING.startswith(text) for text in texts)  # no part of the first reply was kept


def test_an_intervention_or_interrupt_from_the_end_of_call_points_is_taken_there(nb: Path) -> None:
    """The checkpoints after `chat_model_call_after`, `reasoning_stream_end` and `response_stream_end`: the reply is
    kept in history, its tool request is not run."""
    from a0nb.testing import tool_reply

    for point in ("chat_model_call_after", "reasoning_stream_end", "response_stream_end"):
        agent = Agent(nb, model=[tool_reply("noop"), answer("did the other thing"), tool_reply("noop"), answer("x")])
        ran: list[int] = []
        agent.register_tool(lambda: ran.append(1) or "ok", name="noop")
        agent.register_extension(point, lambda: agent.intervene("do the other thing") if len(agent.calls) == 1
                                 else None, name="intervene")
        assert agent.ask("go").text == "did the other thing" and ran == []
        assert tool_reply("noop") in [str(m.content) for m in agent.history.messages()]
        agent.register_extension(point, lambda: agent.interrupt() if len(agent.calls) == 3 else None, name="interrupt")
        with pytest.raises(TurnInterrupted):
            agent.ask("again")
        assert ran == [] and [str(m.content) for m in agent.history.messages()].count(tool_reply("noop")) == 2
