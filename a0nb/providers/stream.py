"""The one function that drives a streamed model call: the provider and its extensions as a pipeline,
retries before the first chunk, reasoning/response deltas to a sink, early stop, the final reply."""
from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, Sequence

from a0nb.atomic_io import StorageError
from a0nb.errors import A0Error
from a0nb.providers.base import (ModelConfig, ModelReply, Provider, RunSink, StreamBroken, StreamSink,
                               TransientModelError)
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
    provider, run = pipeline.provider, _Run(pipeline, sink)
    native = pipeline.request(messages)
    state = pipeline.state
    stream = None
    try:
        # nobody to show single deltas to, and the provider has its whole stream at hand: one synchronous run
        closer = run.quiet()
        # (`chunks` looked up on the class: a wrapper that hands every other attribute on to the provider it wraps
        # streams for itself)
        at_hand = getattr(type(provider), "chunks", None) if closer is not None else None
        if at_hand is not None and (chunks := at_hand(provider, native, state)) is not None:
            run.fold(chunks, closer)  # type: ignore[arg-type]
        else:
            stream = provider.stream(native, state)
            await run.follow(stream)
        if not run.stopped:
            held = pipeline.end()  # what the extensions held back (most often nothing: no sink call then)
            if held[0] or held[1]:
                await run.end(held)
    except (A0Error, asyncio.CancelledError, KeyboardInterrupt):
        raise
    except Exception as exc:
        if state["partial"]["chunks"] and not run.in_sink:  # (what the sink raises, an intervention say, is its own)
            raise StreamBroken(f"the {provider.name} stream broke after {state['partial']['chunks']} chunks: "
                               f"{type(exc).__name__}: {exc}", run.content) from exc
        raise
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    reply = pipeline.reply((run.reasoning, run.content), run.stopped)
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


class _Run:
    """The reply so far: the deltas folded from the chunks (the pipeline's provider and extensions), given to the
    sink, and whether the sink stopped it early. `in_sink`: what was raised, was raised by the sink."""

    __slots__ = ("pipeline", "sink", "reasoning", "content", "stopped", "in_sink")

    def __init__(self, pipeline: CallPipeline, sink: StreamSink | None) -> None:
        self.pipeline, self.sink = pipeline, sink
        self.reasoning = self.content = ""
        self.stopped = self.in_sink = False

    def quiet(self) -> str | None:
        """None while someone wants each delta as it comes; else the text a response delta must hold for the
        sink to stop the reply there ('' when there is no sink: nothing stops it)."""
        sink = self.sink
        if sink is None:
            return ""
        quiet = getattr(sink, "quiet_run", None)  # (a RunSink)
        return None if quiet is None else quiet()  # type: ignore[no-any-return]

    def fold(self, chunks: list[Any], closer: str) -> None:
        """Every chunk through the pipeline as in `follow`, in one synchronous run: the sink is asked only at a
        response delta holding `closer` (`stop_at`), and told once at the end (`run_over`) what it would have been
        told delta by delta. (Nothing runs between the deltas but the pipeline: the sink loses nothing.) Once no
        extension folds chunks, a provider with `take` takes the rest in runs that end at a delta holding `closer`."""
        pipeline = self.pipeline
        sink: RunSink | None = self.sink  # type: ignore[assignment]
        state = pipeline.state
        stop = sink.stop_at if sink is not None and closer else None
        take = getattr(type(pipeline.provider), "take", None)
        reasoning = content = ""
        snapshot: str | None = None
        r_count = c_count = i = 0
        n = len(chunks)
        try:
            while i < n:
                if pipeline.chunking or take is None:  # chunk by chunk: the extensions (or the provider) see each
                    r_delta, c_delta = pipeline.chunk(chunks[i]) if pipeline.chunking else \
                        pipeline.provider.process_chunk(chunks[i], state)
                    i += 1
                    r_deltas, c_deltas = (r_delta,) if r_delta else (), (c_delta,) if c_delta else ()
                else:  # the provider's own run, up to the next delta that may stop the reply
                    taken, r_deltas, c_deltas = take(pipeline.provider, chunks[i:] if i else chunks, state,
                                                     closer if stop is not None else "")
                    i += taken
                if r_deltas:
                    reasoning += "".join(r_deltas)
                    r_count += len(r_deltas)
                if c_deltas:
                    content += "".join(c_deltas)
                    c_count += len(c_deltas)
                    if stop is not None and closer in c_deltas[-1]:
                        self.in_sink = True
                        snapshot = stop(content)
                        self.in_sink = False
                        if snapshot is not None:
                            self.stopped = True
                            break
        finally:
            self.reasoning, self.content = reasoning, (snapshot if snapshot is not None else content)
            if sink is not None:
                self.in_sink = True
                sink.run_over(r_count, c_count, content)
                self.in_sink = False

    async def follow(self, stream: AsyncIterator[Any]) -> None:
        """Chunk by chunk as the stream brings them, each delta to the sink."""
        pipeline, sink = self.pipeline, self.sink
        state = pipeline.state
        direct = None if pipeline.chunking else pipeline.provider.process_chunk  # no extension folds (now)
        reasoning = content = ""  # running texts: the sink gets the whole text so far without re-joining
        try:
            async for chunk in stream:
                if direct is None:
                    r_delta, c_delta = pipeline.chunk(chunk)
                    if not pipeline.chunking:  # the last folding extension passes the rest through
                        direct = pipeline.provider.process_chunk
                else:
                    r_delta, c_delta = direct(chunk, state)
                if r_delta:
                    reasoning += r_delta
                    if sink is not None:
                        self.in_sink = True
                        await sink.reasoning(r_delta, reasoning)
                        self.in_sink = False
                if c_delta:
                    content += c_delta
                    if sink is not None:
                        self.in_sink = True
                        snapshot = await sink.response(c_delta, content)
                        self.in_sink = False
                        if snapshot is not None:  # early stop: the reply ends with the first tool request
                            content, self.stopped = snapshot, True
                            break
        finally:
            self.reasoning, self.content = reasoning, content

    async def end(self, held: tuple[str, str]) -> None:
        """The stream ended by itself: what the extensions held back goes to the sink."""
        r_delta, c_delta = held
        sink = self.sink
        self.in_sink = True
        if r_delta:
            self.reasoning += r_delta
            if sink is not None:
                await sink.reasoning(r_delta, self.reasoning)
        if c_delta:
            self.content += c_delta
            if sink is not None:
                snapshot = await sink.response(c_delta, self.content)
                if snapshot is not None:
                    self.content = snapshot
        self.in_sink = False
