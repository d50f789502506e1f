"""The per-request pipeline's plan (which provider extensions apply, and which of their methods do anything)
is kept per extension list and provider: a changed providers/ file, another provider, or an extension that
decides per request (`is_enabled`) is looked at again; an extension whose `process_chunk` passes the rest
through leaves the per-chunk loop, one that does not is called for every chunk."""
from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator

from a0nb import Agent
from a0nb.providers.base import ModelConfig, ModelReply
from a0nb.providers.extension import CallPipeline, bundled_provider_extensions
from a0nb.providers.stream import complete
from a0nb.testing import answer

THINK = "_10_think_tags.ThinkTags"


class _Pieces:
    """A provider without a reasoning channel that streams the given pieces."""

    def __init__(self, pieces: list[str], name: str = "pieces", tags: frozenset[str] = frozenset()) -> None:
        self.pieces, self.name, self._tags = pieces, name, tags

    def tags(self, config: ModelConfig) -> frozenset[str]:
        return self._tags

    def init(self, config: ModelConfig) -> dict[str, Any]:
        return {}

    def initialize_request(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> Any:
        return messages, state

    async def stream(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> AsyncIterator[str]:
        for piece in self.pieces:
            yield piece

    def process_chunk(self, chunk: str, state: dict[str, Any]) -> tuple[str, str]:
        state["partial"]["chunks"] += 1
        state["partial"]["content"].append(chunk)
        return "", chunk

    def finalize(self, state: dict[str, Any]) -> ModelReply:
        return ModelReply(content="".join(state["partial"]["content"]))


def _run(provider: Any, extensions: Any = None) -> ModelReply:
    import asyncio
    return asyncio.run(complete(provider, [{"role": "user", "content": "u"}], ModelConfig(spec="x"),
                                extensions=extensions))


def test_think_tags_leave_the_chunk_loop_once_past_the_opening_and_split_as_before() -> None:
    pieces = ["  <thi", "nk>plan ", "more</th", "ink>  ", "the answer", " <think>not a tag now</think>"]
    pipeline = CallPipeline(_Pieces(pieces), ModelConfig(spec="x"), bundled_provider_extensions())
    seen = []
    for piece in pieces:
        seen.append((pipeline.chunk(piece), pipeline.chunking))
    assert [chunking for _, chunking in seen] == [True, True, True, True, False, False]
    reply = _run(_Pieces(pieces))
    assert reply.reasoning == "plan more" and reply.content == "the answer <think>not a tag now</think>"
    assert reply.extensions == [THINK]


def test_the_plan_follows_the_provider_name_and_tags() -> None:
    extensions = bundled_provider_extensions()
    plain = CallPipeline(_Pieces([]), ModelConfig(spec="x"), extensions)
    channel = CallPipeline(_Pieces([], "other", frozenset({"reasoning", "tools"})), ModelConfig(spec="x"), extensions)
    again = CallPipeline(_Pieces([]), ModelConfig(spec="x"), extensions)
    assert plain.state["provider_extensions"] == again.state["provider_extensions"] == [THINK]
    assert channel.state["provider_extensions"] == [THINK, "_20_native_tool_calls.NativeToolCalls"]  # (tools: native calls)


_EVERY_CHUNK = '''
from a0nb.providers import ProviderExtension


class Upper(ProviderExtension):  # (only the q of "quiet": the reply stays a tool request)
    """Decides per request (a model param), and folds every chunk."""

    def is_enabled(self, config, tags):
        return bool(config.params.get("shout"))

    def process_chunk(self, chunk, deltas, state):
        state["folded"] = state.get("folded", 0) + 1
        return deltas[0], deltas[1].replace("q", "Q")

    def finalize(self, reply, state):
        reply.usage["folded"] = state.get("folded", 0)
        return reply
'''


def test_an_extension_that_decides_per_request_is_asked_every_request_and_folds_every_chunk(nb: Path) -> None:
    reply = answer("quiet words here")
    agent = Agent(nb, model=[reply, reply, reply])
    assert agent.ask("one").text == "quiet words here"
    (nb / "providers").mkdir()
    (nb / "providers" / "_50_upper.py").write_text(_EVERY_CHUNK)  # a new list of extensions: a new plan
    assert agent.ask("two").text == "quiet words here"  # not enabled: no `shout` param
    agent.configure(model_kwargs={"shout": True})
    turn = agent.ask("three")
    record = turn.calls[0]
    assert record.provider_extensions == [THINK, "_50_upper.Upper"]
    assert turn.text == "Quiet words here" and record.response == reply.replace("q", "Q")
    assert record.usage["folded"] == -(-len(reply) // 8)


def test_a_reply_that_opens_with_text_is_never_split_and_blank_first_chunks_still_wait_for_a_tag() -> None:
    text = _run(_Pieces(["Hello ", "<think>not reasoning</think>", " bye"]))
    assert text.content == "Hello <think>not reasoning</think> bye" and text.reasoning == ""
    blank = _run(_Pieces(["\n  ", " <rea", "soning>why</reasoning>", "answer"]))
    assert blank.content == "answer" and blank.reasoning == "why"
    pipeline = CallPipeline(_Pieces([]), ModelConfig(spec="x"), bundled_provider_extensions())
    assert pipeline.chunk("{") == ("", "{") and not pipeline.chunking  # out of the chunk loop at once
