"""Watching a streamed reply for its first complete tool request in time linear in the reply's length.

Only the new text of each delta is looked at. The incremental DirtyJson (the parser `first_closed_object`
and `parse_dirty` use) is fed what arrived since it last ran — after every delta when the partial value is
wanted (`response_stream` extensions), otherwise only when a `}` arrives (nothing else can close the object).
A short reply that is strict JSON so far is checked by the C decoder instead (the same end, for strict JSON,
as DirtyJson's); a long or non-strict one goes to DirtyJson, which never re-reads what it has consumed."""
from __future__ import annotations

import json
from typing import Any

from a0nb.engine.dirty_json import MAX_DEPTH, DirtyJson
from a0nb.engine.extract import ToolRequest, parse_tool_request

__all__ = ["ReplyWatch"]

_DECODER = json.JSONDecoder(strict=False)
STRICT_LIMIT = 2048  # characters of an object the C decoder re-reads at a `}`; longer ones go to DirtyJson


class ReplyWatch:
    """Fed the growing reply; knows its first closed top-level object and the partial value so far.
    `live`: the partial value is read after every delta (so the parser keeps up with each one)."""

    def __init__(self, live: bool = True) -> None:
        self.live = live
        self.seen = 0              # characters of the reply already looked at
        self.start = -1            # offset of the first `{`
        self.blocked = False       # a `[` came before the first `{`: first_closed_object says None
        self.done = False          # the first object closed (or is blocked): nothing more to find
        self.parser: DirtyJson | None = None
        self.request: str | None = None   # the first closed object, once it is a valid tool request
        self.parsed: ToolRequest | None = None  # ... and what parse_tool_request made of it
        self._full = ""
        self._fed = 0              # characters of the reply the parser was given
        self._strict = True        # the object so far may be a prefix of strict JSON

    @property
    def value(self) -> Any:
        """The parse of the reply so far (partial tokens included), None before the first `{`."""
        if self.parser is None:
            return None
        self._catch_up()
        return self.parser.value

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
            self.parser = DirtyJson()
            self.done = self.blocked
        if self.live:
            self._catch_up()
        if self.done or full.find("}", seen) < 0:
            return self.request
        end = self._closed_end(full)
        if end is not None:
            self.done = True
            obj = full[self.start:end]
            parsed = parse_tool_request(obj)
            if isinstance(parsed, ToolRequest):
                self.request, self.parsed = obj, parsed
        return self.request

    def _closed_end(self, full: str) -> int | None:
        """Where the first object ends in `full` (just past its `}`), or None while it is open."""
        start = self.start
        if self._strict and not self.live and len(full) - start <= STRICT_LIMIT:
            try:
                _value, end = _DECODER.raw_decode(full, start)
            except json.JSONDecodeError as exc:
                if exc.pos == len(full) or exc.msg.startswith("Unterminated string"):
                    return None  # strict JSON so far, cut short: DirtyJson would not have closed it either
                self._strict = False
            except (ValueError, RecursionError):
                self._strict = False
            else:  # DirtyJson stops at MAX_DEPTH levels: a deeper object never closes for it
                if full.count("{", start, end) + full.count("[", start, end) <= MAX_DEPTH:
                    return int(end)
                self._strict = False
        self._catch_up()
        parser = self.parser
        assert parser is not None
        return start + parser.end if parser.completed and parser.end is not None else None

    def _catch_up(self) -> None:
        full, parser = self._full, self.parser
        if parser is not None and self._fed < len(full):
            parser.feed(full[self._fed:])
            self._fed = len(full)
