"""The provider protocol and the one function that drives a streamed model call through it:
retries before the first chunk, reasoning/response deltas to a sink, early stop, final reply."""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Literal, Protocol, runtime_checkable

from ..errors import A0Error, ModelError
from ..think import ThinkSplitter

Role = Literal["chat", "utility", "embedding"]


@dataclass
class ModelConfig:
    """One role's model settings, after the config layers were applied."""

    spec: str
    role: Role = "chat"
    params: dict[str, Any] = field(default_factory=dict)   # temperature, max_tokens, ...
    api_base: str | None = None
    api_key_env: str | None = None
    ctx_length: int = 128_000
    history_share: float = 0.7
    retries: int = 2
    backoff: float = 1.5
    vision: bool = False


@dataclass
class ModelReply:
    content: str
    reasoning: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    cost: float | None = None
    latency: float = 0.0
    model: str = ""
    chunks: int = 0
    stopped_early: bool = False


class TransientModelError(ModelError):
    """Worth retrying (rate limit, timeout, server error) — only before the first chunk arrived."""


class ContextWindowExceeded(ModelError):
    """The request did not fit the model's window; the loop compacts once and retries."""


class StreamBroken(ModelError):
    """The stream failed after chunks arrived; nothing is retried (the partial reply is kept)."""

    def __init__(self, message: str, partial: str = "") -> None:
        super().__init__(message)
        self.partial = partial


@runtime_checkable
class Provider(Protocol):
    """What every provider implements. `state` is one dict per request, shared with provider extensions."""

    name: str
    has_reasoning_channel: bool

    def init(self, config: ModelConfig) -> dict[str, Any]: ...
    def initialize_request(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]: ...
    def stream(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> AsyncIterator[Any]: ...
    def process_chunk(self, chunk: Any, state: dict[str, Any]) -> tuple[str, str]: ...   # (reasoning delta, content delta)
    def finalize(self, state: dict[str, Any]) -> ModelReply: ...


class StreamSink(Protocol):
    async def reasoning(self, delta: str, full: str) -> None: ...
    async def response(self, delta: str, full: str) -> str | None:
        """Return a snapshot to stop the stream early (the canonical reply), or None to go on."""


def new_partial() -> dict[str, Any]:
    return {"content": [], "reasoning": [], "tool_calls": {}, "usage": {}, "chunks": 0}


async def complete(provider: Provider, messages: list[dict[str, Any]], config: ModelConfig,
                   sink: StreamSink | None = None) -> ModelReply:
    """Run one streamed call. Transient errors are retried (with backoff) only before the first chunk."""
    attempt = 0
    while True:
        try:
            return await _attempt(provider, messages, config, sink)
        except TransientModelError as exc:
            if getattr(exc, "after_first_chunk", False) or attempt >= config.retries:
                raise
            attempt += 1
            await asyncio.sleep(config.backoff * attempt)


async def _attempt(provider: Provider, messages: list[dict[str, Any]], config: ModelConfig,
                   sink: StreamSink | None) -> ModelReply:
    started = time.perf_counter()
    state = provider.init(config)
    state.setdefault("partial", new_partial())
    native, state = provider.initialize_request(messages, state)
    splitter = None if provider.has_reasoning_channel else ThinkSplitter()
    acc = {"r": "", "c": ""}  # running texts: the sink gets the whole text so far without re-joining
    stopped = False
    stream = provider.stream(native, state)
    try:
        async for chunk in stream:
            r_delta, c_delta = provider.process_chunk(chunk, state)
            if splitter is not None and c_delta:
                extra_r, c_delta = splitter.feed(c_delta)
                r_delta += extra_r
            if await _emit(sink, r_delta, c_delta, acc):
                stopped = True
                break
        if splitter is not None and not stopped:
            extra_r, c_delta = splitter.flush()
            await _emit(sink, extra_r, c_delta, acc)
    except (A0Error, asyncio.CancelledError, KeyboardInterrupt):
        raise
    except Exception as exc:
        if state["partial"]["chunks"]:
            raise StreamBroken(f"the {provider.name} stream broke after {state['partial']['chunks']} chunks: "
                               f"{type(exc).__name__}: {exc}", acc["c"]) from exc
        raise
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    reply = provider.finalize(state)
    reply.latency = time.perf_counter() - started
    if splitter is not None or stopped:
        # the canonical text is what was emitted: think tags split off, text after an early stop dropped
        reply.content = acc["c"]
        reply.reasoning = acc["r"] or reply.reasoning
    reply.stopped_early = stopped
    return reply


async def _emit(sink: StreamSink | None, r_delta: str, c_delta: str, acc: dict[str, str]) -> bool:
    if r_delta:
        acc["r"] += r_delta
        if sink is not None:
            await sink.reasoning(r_delta, acc["r"])
    if c_delta:
        acc["c"] += c_delta
        if sink is not None:
            snapshot = await sink.response(c_delta, acc["c"])
            if snapshot is not None:
                acc["c"] = snapshot
                return True
    return False
