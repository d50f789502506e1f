"""The one function that drives a streamed model call: the provider and its extensions as a pipeline,
retries before the first chunk, reasoning/response deltas to a sink, early stop, the final reply."""
from __future__ import annotations

import asyncio
import time
from typing import Any, Sequence

from a0nb.atomic_io import StorageError
from a0nb.errors import A0Error
from a0nb.providers.base import ModelConfig, ModelReply, Provider, StreamBroken, StreamSink, TransientModelError
from a0nb.providers.extension import CallPipeline, LoadedExtension, bundled_provider_extensions

__all__ = ["complete"]


async def complete(provider: Provider, messages: list[dict[str, Any]], config: ModelConfig,
                   sink: StreamSink | None = None, extensions: Sequence[LoadedExtension] | None = None) -> ModelReply:
    """Run one streamed call. Transient errors are retried (with backoff) only before the first chunk.
    `extensions`: the provider extensions to consider (an agent passes its hierarchy's); None = the bundled."""
    if extensions is None:
        extensions = bundled_provider_extensions()
    attempt = 0
    while True:
        try:
            return await _attempt(CallPipeline(provider, config, extensions), messages, sink)
        except TransientModelError as exc:
            if getattr(exc, "after_first_chunk", False) or attempt >= config.retries:
                raise
            attempt += 1
            await asyncio.sleep(config.backoff * attempt)


async def _attempt(pipeline: CallPipeline, messages: list[dict[str, Any]], sink: StreamSink | None) -> ModelReply:
    started = time.perf_counter()
    provider = pipeline.provider
    native = pipeline.request(messages)
    state = pipeline.state
    direct = None if pipeline.chunking else provider.process_chunk  # no extension folds (now): skip the pipeline
    reasoning = content = ""  # running texts: the sink gets the whole text so far without re-joining
    stopped = in_sink = False  # in_sink: what the sink raises (an intervention, say) is not a broken stream
    stream = provider.stream(native, state)
    try:
        async for chunk in stream:
            if direct is None:
                r_delta, c_delta = pipeline.chunk(chunk)
                if not pipeline.chunking:  # the last folding extension passes the rest through
                    direct = provider.process_chunk
            else:
                r_delta, c_delta = direct(chunk, state)
            if r_delta:
                reasoning += r_delta
                if sink is not None:
                    in_sink = True
                    await sink.reasoning(r_delta, reasoning)
                    in_sink = False
            if c_delta:
                content += c_delta
                if sink is not None:
                    in_sink = True
                    snapshot = await sink.response(c_delta, content)
                    in_sink = False
                    if snapshot is not None:  # early stop: the reply ends with the first tool request
                        content, stopped = snapshot, True
                        break
        if not stopped:
            r_delta, c_delta = pipeline.end()
            acc = {"r": reasoning, "c": content}
            in_sink = True
            await _emit(sink, r_delta, c_delta, acc)
            in_sink = False
            reasoning, content = acc["r"], acc["c"]
    except (A0Error, asyncio.CancelledError, KeyboardInterrupt):
        raise
    except Exception as exc:
        if state["partial"]["chunks"] and not in_sink:
            raise StreamBroken(f"the {provider.name} stream broke after {state['partial']['chunks']} chunks: "
                               f"{type(exc).__name__}: {exc}", content) from exc
        raise
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    reply = pipeline.reply((reasoning, content), stopped)
    reply.latency = time.perf_counter() - started
    try:
        pipeline.completed(reply)  # a recording provider writes its cassette here
    except StorageError as exc:  # disk full, permissions: the reply itself is fine, and is kept
        raise StreamBroken(f"the reply arrived but could not be saved: {exc}", reply.content) from exc
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        raise StreamBroken(f"the reply arrived but could not be saved to{where}: {exc.strerror or exc} "
                           "(free disk space or fix the folder's permissions)", reply.content) from exc
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
