"""The chat call's streamed reply: the sink that checkpoints every delta, keeps the reply so far and fires
the stream extension points (`LoopSink`), and the watch for its first complete tool request in time linear in
the reply's length (`ReplyWatch`).

Only the new text of each delta is looked at. The incremental DirtyJson (the parser `first_closed_object`
and `parse_dirty` use) is fed what arrived since it last ran — after every delta when the partial value is
wanted (`response_stream` extensions), otherwise only when a `}` arrives (nothing else can close the object).
A short reply that is strict JSON so far is checked by the C decoder instead (the same end, for strict JSON,
as DirtyJson's); a long or non-strict one goes to DirtyJson, which never re-reads what it has consumed."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from a0nb.engine.control import turn_flag
from a0nb.errors import ExtensionError, RepairableError
from a0nb.engine.dirty_json import MAX_DEPTH, DirtyJson
from a0nb.engine.extract import ToolRequest, parse_tool_request, request_from_value

if TYPE_CHECKING:
    from a0nb.engine.calls import ModelCalls
    from a0nb.engine.loop_data import LoopData

__all__ = ["LoopSink", "ReplyWatch"]

_DECODER = json.JSONDecoder(strict=False)
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]  # (set by JSONDecoder.__init__)
STRICT_LIMIT = 2048  # characters of an object the C decoder re-reads at a `}`; longer ones go to DirtyJson
# the points fired per delta (`response_stream` too, but only with extensions there: then every delta is parsed)
_CHUNK_POINTS = ("reasoning_stream_chunk", "reasoning_stream", "response_stream_chunk")


class LoopSink:
    """Each delta of the chat call: a checkpoint (interrupt, intervention), the reply so far kept in
    `calls.streamed`, the watch for the first tool request (its snapshot stops the stream), the stream points.

    When no extension listens at any stream point (and no trace is kept), a fire would only be counted: the
    deltas are counted instead and the counts added once, at `close` (`Extensions.skipped`). A change to any
    chain mid-stream (a registration, a changed file: `Extensions.version`) turns the fires back on at once."""

    def __init__(self, calls: ModelCalls, ld: LoopData) -> None:
        host = calls.host
        self.calls, self.host, self.ld = calls, host, ld
        ext = self.extensions = host.extensions
        plan = calls.stream_plan  # (the chains looked at once per version of them, not once per call)
        if plan is None or plan[0] != ext.version:
            live = bool(ext.resolve("response_stream"))
            quiet = not live and not any(map(ext.resolve, _CHUNK_POINTS))
            plan = calls.stream_plan = (ext.version, live, quiet)  # (the version after resolving: it may move)
        self.has_stream_ext = plan[1]
        self.watch = ReplyWatch(live=plan[1])
        self.stop_at = self.watch.feed  # (RunSink.stop_at: the watch's snapshot, asked without a frame of its own)
        self.flag = turn_flag()  # (the turn's cancel flag: looked up once, read per delta)
        # the chains' version the deltas may skip the fires for (-1: they fire; a trace wants them one by one)
        self.quiet = plan[0] if plan[2] and ext.stats.trace is None else -1
        self.reasoning_skipped = self.response_skipped = 0

    async def reasoning(self, delta: str, full: str) -> None:
        host = self.host
        if self.flag.raised or host.intervention is not None:  # (the checkpoint, called when it has work to do)
            host.checkpoint(self.ld)
        if self.quiet == self.extensions.version:
            self.reasoning_skipped += 1
            return
        self._loud()
        await host.fire("reasoning_stream_chunk", loop_data=self.ld, stream_data={"chunk": delta, "full": full})
        await host.fire("reasoning_stream", loop_data=self.ld, text=full)

    async def response(self, delta: str, full: str) -> str | None:
        host = self.host
        if self.flag.raised or host.intervention is not None:
            host.checkpoint(self.ld)
        self.calls.streamed = full
        watch = self.watch
        # only a `}` can close the object (the watch looks for `{` and `[` from where it was last fed, skipped
        # deltas included); the live parse wants every delta
        snapshot = watch.feed(full) if watch.live or "}" in delta else None
        if self.quiet == self.extensions.version:
            self.response_skipped += 1
            return snapshot
        self._loud()
        stream_data = {"chunk": delta, "full": snapshot or full}
        await host.fire("response_stream_chunk", loop_data=self.ld, stream_data=stream_data)
        if self.has_stream_ext and len(full) >= 25:
            parsed = watch.value
            if isinstance(parsed, dict):
                try:
                    await host.fire("response_stream", loop_data=self.ld, text=full, parsed=parsed)
                except (ExtensionError, RepairableError) as exc:
                    self._stream_error(exc)
        return snapshot

    def _stream_error(self, exc: Exception) -> None:
        """An extension failed at `response_stream`. Agent Zero ignores any error there (the partial value may lack
        what a later delta brings: upstream's own `_10_log_from_stream` fails on a `code` not yet streamed), so the
        reply goes on, and the rest of that point's chain waits for the next delta, as upstream; the failure
        becomes a diagnostic (one per file, line and message)."""
        path = exc.path if isinstance(exc, ExtensionError) else None
        line = exc.line if isinstance(exc, ExtensionError) else None
        self.extensions.diagnostics.add(
            "warning", "extension", f"{exc} (at response_stream an error is ignored, as in Agent Zero: the reply went on)",
            path, line, fix="make the extension allow a partial reply (a key whose value has not arrived is None)")

    def quiet_run(self) -> str | None:
        """While the deltas skip the fires, a provider's chunks at hand may be folded in one run (the stream
        driver's `fold`): only a delta holding a `}` can close the tool request, so only there is `stop_at` asked."""
        return "}" if self.quiet == self.extensions.version else None

    def run_over(self, reasoning: int, response: int, full: str) -> None:
        """The run's deltas, told at once: the checkpoint as at its first delta (nothing but the pipeline ran
        since; the reply so far is still the one before the run; no delta, no checkpoint), then the skipped fires
        and the reply so far."""
        if (reasoning or response) and (self.flag.raised or self.host.intervention is not None):
            self.host.checkpoint(self.ld)
        self.reasoning_skipped += reasoning
        self.response_skipped += response
        if response:
            self.calls.streamed = full

    def _loud(self) -> None:
        """From now on every delta fires (the chains changed, or were never quiet)."""
        if self.quiet >= 0:
            self.close()
            self.quiet = -1

    def close(self) -> None:
        """The stream is over (or broke): count the fires the deltas skipped."""
        reasoning, response, self.reasoning_skipped, self.response_skipped = \
            self.reasoning_skipped, self.response_skipped, 0, 0
        if reasoning:
            self.extensions.skipped("reasoning_stream_chunk", reasoning)
            self.extensions.skipped("reasoning_stream", reasoning)
        if response:
            self.extensions.skipped("response_stream_chunk", response)


class ReplyWatch:
    """Fed the growing reply; knows its first closed top-level object and the partial value so far.
    `live`: the partial value is read after every delta (so the parser keeps up with each one)."""

    # a new watch's state, set on the instance as the reply arrives (defaults on the class: one store per watch)
    seen = 0                    # characters of the reply already looked at
    start = -1                  # offset of the first `{`
    blocked = False             # a `[` came before the first `{`: first_closed_object says None
    done = False                # the first object closed (or is blocked): nothing more to find
    _parser: DirtyJson | None = None  # (made when first needed: a strict reply is decoded in C)
    _decoded: dict[str, Any] | None = None  # the first object as the C decoder read it
    request: str | None = None  # the first closed object, once it is a valid tool request
    parsed: ToolRequest | None = None  # ... and what parse_tool_request made of it
    _full = ""
    _fed = 0                    # characters of the reply the parser was given
    _strict = True              # the object so far may be a prefix of strict JSON

    def __init__(self, live: bool = True) -> None:
        self.live = live

    @property
    def parser(self) -> DirtyJson | None:
        """The incremental parser of the object from its `{` on (None before the first `{`)."""
        if self._parser is None and self.start >= 0:
            self._parser = DirtyJson()
        return self._parser

    @property
    def value(self) -> Any:
        """The parse of the reply so far (partial tokens included), None before the first `{`."""
        if self.start < 0:
            return None
        self._catch_up()
        return self.parser.value  # type: ignore[union-attr]

    def feed(self, full: str) -> str | None:
        """The first complete tool request in `full` (the reply so far), or None."""
        seen, self.seen, self._full = self.seen, len(full), full
        if self.start < 0:
            brace = full.find("{", seen)
            if brace < 0:
                self.blocked = self.blocked or full.find("[", seen) >= 0
                return None
            self.blocked = self.blocked or full.find("[", seen, brace) >= 0
            self.start = self._fed = seen = brace
            self.done = self.blocked
        if self.live:
            self._catch_up()
        if self.done or full.find("}", seen) < 0:
            return self.request
        end = self._closed_end(full)
        if end is not None:
            self.done = True
            obj = full[self.start:end]
            decoded = self._decoded  # (what parse_tool_request(obj) would decode again)
            parsed = parse_tool_request(obj) if decoded is None else request_from_value(decoded, obj)
            if isinstance(parsed, ToolRequest):
                self.request, self.parsed = obj, parsed
        return self.request

    def _closed_end(self, full: str) -> int | None:
        """Where the first object ends in `full` (just past its `}`), or None while it is open."""
        start, n = self.start, len(full)
        if self._strict and not self.live and n - start <= STRICT_LIMIT:
            # (the decoder's C scanner, as raw_decode calls it) first on the reply with one `}` more: a `}` that
            # closed an inner object (the arguments) leaves the reply one `}` short, and the scan then ends just
            # past the added one instead of raising at the end of the reply (most of a failed scan's cost). It
            # reads the same characters as a scan of `full` up to the end of `full`: an object closed within `full`
            # closes where `full`'s own scan closes it, and a scan that went past `full` (closed by the added
            # `}`, or stopped after it or in a string) means `full` is strict JSON cut short
            try:
                value, end = _SCAN(full + "}", start)
            except json.JSONDecodeError as exc:
                if exc.pos == n + 1 or exc.msg.startswith("Unterminated string"):
                    return None
                end = -1
            except (ValueError, RecursionError, StopIteration):
                end = -1
            if end > n:
                return None
            if end < 0:  # anything else: `full`'s own scan tells
                try:
                    value, end = _SCAN(full, start)
                except StopIteration as exc:  # (raw_decode's "Expecting value" at exc.value)
                    if exc.value == n:
                        return None  # strict JSON so far, cut short: DirtyJson would not have closed it either
                    self._strict = False
                except json.JSONDecodeError as exc:
                    if exc.pos == n or exc.msg.startswith("Unterminated string"):
                        return None
                    self._strict = False
                except (ValueError, RecursionError):
                    self._strict = False
            if self._strict:  # closed at `end`; DirtyJson stops at MAX_DEPTH levels: a deeper object never closes for it
                if full.count("{", start, end) + full.count("[", start, end) <= MAX_DEPTH:
                    self._decoded = value
                    return int(end)
                self._strict = False
        self._catch_up()
        parser = self.parser
        assert parser is not None
        return start + parser.end if parser.completed and parser.end is not None else None

    def _catch_up(self) -> None:
        full = self._full
        if self.start >= 0 and self._fed < len(full):
            self.parser.feed(full[self._fed:])  # type: ignore[union-attr]
            self._fed = len(full)
