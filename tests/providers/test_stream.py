"""The stream driver: a provider's chunks at hand folded in one run (its own `take` once no extension folds chunks)
give the reply, usage, chunk count and sink calls that following the stream delta by delta gives."""
from __future__ import annotations

import asyncio
from typing import Any

from a0nb.providers.base import ModelConfig, ModelReply
from a0nb.providers.extension import bundled_provider_extensions
from a0nb.providers.scripted import ScriptedProvider
from a0nb.providers.stream import complete
from a0nb.testing import answer

REPLIES: list[Any] = [
    answer("short"),
    answer("short") + " and text after the request that the early stop drops}",
    '{"a": {"b": {}}, "c": "}"} {"second": 1}',
    "no closer at all",
    "",
    "<think>plan {it}</think>" + answer("thought"),
    {"content": answer("x"), "reasoning": "a plan with } braces {"},
]


class _Sink:
    """Stops at the first `}` ending a run of the reply past `at` characters; counts what it was told."""

    def __init__(self, at: int, quiet: bool) -> None:
        self.at, self.quiet, self.told = at, quiet, [0, 0, ""]
        self.asked: list[str] = []

    def quiet_run(self) -> str | None:
        return "}" if self.quiet else None

    def stop_at(self, full: str) -> str | None:
        self.asked.append(full)
        return full if len(full) > self.at and full.endswith("}") else None

    async def reasoning(self, delta: str, full: str) -> None:
        self.told[0] += 1  # type: ignore[operator]

    async def response(self, delta: str, full: str) -> str | None:
        self.told[1] += 1  # type: ignore[operator]
        self.told[2] = full
        return self.stop_at(full) if "}" in delta else None

    def run_over(self, reasoning: int, response: int, full: str) -> None:
        self.told = [reasoning, response, full]


def _reply(reply: ModelReply) -> tuple[Any, ...]:
    return (reply.content, reply.reasoning, reply.usage, reply.chunks, reply.stopped_early, reply.extensions)


def test_a_run_folded_with_take_reads_as_the_stream_followed_delta_by_delta() -> None:
    for at in (0, 10, 30, 10_000):
        quiet, loud = ScriptedProvider(REPLIES), ScriptedProvider(REPLIES)
        for _ in REPLIES:
            quiet_sink, loud_sink = _Sink(at, True), _Sink(at, False)
            folded = asyncio.run(complete(quiet, [{"role": "user", "content": "hi"}], ModelConfig("scripted"),
                                          quiet_sink, bundled_provider_extensions()))
            followed = asyncio.run(complete(loud, [{"role": "user", "content": "hi"}], ModelConfig("scripted"),
                                            loud_sink, bundled_provider_extensions()))
            assert _reply(folded) == _reply(followed)
            assert quiet_sink.asked == loud_sink.asked and quiet_sink.told == loud_sink.told


def test_without_a_sink_the_whole_reply_is_taken() -> None:
    quiet, loud = ScriptedProvider(REPLIES), ScriptedProvider(REPLIES)

    class _Loud:
        async def reasoning(self, delta: str, full: str) -> None:
            return None

        async def response(self, delta: str, full: str) -> str | None:
            return None

    for _ in REPLIES:
        folded = asyncio.run(complete(quiet, [{"role": "user", "content": "hi"}], ModelConfig("scripted")))
        followed = asyncio.run(complete(loud, [{"role": "user", "content": "hi"}], ModelConfig("scripted"), _Loud()))
        assert _reply(folded) == _reply(followed)
