"""The scripted model's `delay`: seconds between streamed chunks, so a demo or a browser test can watch the
reply arrive; a bad value is a clear error naming the reply."""
from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from a0nb.errors import ConfigError
from a0nb.providers.scripted import CHUNK, ScriptedProvider, load_script


def test_delay_spaces_the_chunks() -> None:
    provider = ScriptedProvider([{"content": "x" * (CHUNK * 5), "delay": 0.02}, "fast"])

    async def arrivals(state: dict) -> list[float]:
        out = []
        async for _ in provider.stream([], state):
            out.append(time.perf_counter())
        return out
    times = asyncio.run(arrivals({}))
    assert len(times) == 5 and times[-1] - times[0] >= 0.06
    fast = asyncio.run(arrivals({}))
    assert fast[-1] - fast[0] < 0.02


def test_a_bad_delay_names_the_reply(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text("- content: hi\n  delay: soon\n")
    with pytest.raises(ConfigError, match="reply 1 .* delay must be a number"):
        load_script("r.yaml", tmp_path)


def test_common_prefix_finds_the_first_difference_anywhere() -> None:
    """The tail-first search (one comparison up to a little before the end, then item by item, else by halves)
    gives what a plain scan gives, for lists and tuples, equal-but-new items and differences anywhere."""
    import random

    from a0nb.providers.base import common_prefix

    def scan(a: list[str], b: list[str]) -> int:
        i = 0
        while i < min(len(a), len(b)) and a[i] == b[i]:
            i += 1
        return i

    rnd = random.Random(23)
    for _ in range(3000):
        old = [f"m{rnd.randint(0, 3)}" for _ in range(rnd.randint(0, 60))]
        new = old[:rnd.randint(0, len(old))] + [f"m{rnd.randint(0, 3)}" for _ in range(rnd.randint(0, 20))]
        if new and rnd.random() < 0.4:
            new[rnd.randrange(len(new))] = "changed"
        if rnd.random() < 0.3:
            new = ["".join(list(text)) for text in new]  # equal texts, new objects
        assert common_prefix(old, new) == common_prefix(tuple(old), new) == scan(old, new)


def test_chunks_at_once_are_the_chunks_the_stream_yields() -> None:
    """`chunks` hands over what `stream` would yield (reasoning first, then the content); a reply that streams in
    time or breaks off midway is left to `stream`, which serves the reply `chunks` chose; a fault raises from either."""
    from a0nb.providers.base import ModelConfig, TransientModelError

    replies = [{"content": "x" * 20, "reasoning": "think" * 3}, "short", "", {"content": "slow", "delay": 0.001},
               {"content": "cut " * 8, "error": "break"}, {"content": "", "error": "rate_limit"}]
    at_once, streamed = ScriptedProvider(replies), ScriptedProvider(replies)

    async def stream(state: dict) -> list:
        out = []
        try:
            async for chunk in streamed.stream([], state):
                out.append(chunk)
        except ConnectionResetError:
            out.append("broke")
        return out

    for _ in range(3):
        state = at_once.init(ModelConfig("scripted"))
        assert at_once.chunks([], state) == asyncio.run(stream(streamed.init(ModelConfig("scripted"))))
    for _ in range(2):  # `delay`, `break`: None, then the stream serves the very reply chosen
        state = at_once.init(ModelConfig("scripted"))
        assert at_once.chunks([], state) is None
        assert asyncio.run(_served(at_once, state)) == asyncio.run(stream(streamed.init(ModelConfig("scripted"))))
    with pytest.raises(TransientModelError):
        at_once.chunks([], at_once.init(ModelConfig("scripted")))
    assert at_once.remaining == 0


async def _served(provider: ScriptedProvider, state: dict) -> list:
    out: list = []
    try:
        async for chunk in provider.stream([], state):
            out.append(chunk)
    except ConnectionResetError:
        out.append("broke")
    return out


def test_take_is_process_chunk_over_each_chunk_up_to_the_closer() -> None:
    """`take` leaves the state as `process_chunk` chunk by chunk does and returns the same deltas, up to and including
    the first chunk whose response text holds the closer (a reasoning chunk holding it does not end the run)."""
    from a0nb.providers.base import ModelConfig

    chunks = [("r", "thin}k"), ("r", "more"), ("c", '{"a": '), ("c", "{}"), ("c", "}"), ("c", " tail}")]
    provider = ScriptedProvider(["x"])
    for closer in ("", "}", "{}", "never"):
        for start in range(len(chunks)):
            rest = chunks[start:]
            one = provider.init(ModelConfig("scripted"))
            deltas = []
            for chunk in rest:
                deltas.append(provider.process_chunk(chunk, one))
                if closer and chunk[0] == "c" and closer in chunk[1]:
                    break
            bulk = provider.init(ModelConfig("scripted"))
            taken, reasoning, content = provider.take(rest, bulk, closer)
            assert taken == len(deltas) and one["partial"] == bulk["partial"]
            assert reasoning == [r for r, _ in deltas if r] and content == [c for _, c in deltas if c]


def test_a_text_given_again_is_one_reply_and_every_text_its_own() -> None:
    """Repeated texts share the reply made for their first copy; a different text (or a mapping) is a reply of
    its own, served in order: the shared replies never stand for another text."""
    replies, _ = load_script(["a", "b", "a", {"content": "a", "reasoning": "r"}, "b" + "", "".join(["a"])])
    assert [r.content for r in replies] == ["a", "b", "a", "a", "b", "a"]
    assert replies[0] is replies[2] is replies[5] and replies[1] is replies[4] and replies[0] is not replies[1]
    assert replies[3].reasoning == "r" and replies[0].reasoning == ""
    provider = ScriptedProvider(["one", "two", "one"])
    served = [provider._next([]).content for _ in range(3)]
    assert served == ["one", "two", "one"] and provider.remaining == 0
