"""Watching a streamed reply for its first complete tool request in time linear in the reply's length.

Each delta is fed once to an incremental DirtyJson (the same parser `first_closed_object` and `parse_dirty`
use), instead of re-parsing the whole text so far on every chunk — which made a long reply with many `}`
quadratic (a 200 kB reply took tens of seconds)."""
from __future__ import annotations

from typing import Any

from a0nb.engine.dirty_json import DirtyJson
from a0nb.engine.extract import ToolRequest, parse_tool_request


class ReplyWatch:
    """Fed the growing reply; knows its first closed top-level object and the partial value so far."""

    def __init__(self) -> None:
        self.seen = 0              # characters of the reply already looked at
        self.start = -1            # offset of the first `{`
        self.blocked = False       # a `[` came before the first `{`: first_closed_object says None
        self.closed: DirtyJson | None = None
        self.partial: DirtyJson | None = None
        self.request: str | None = None   # the first closed object, once it is a valid tool request
        self._checked: str | None = None
        self.value: Any = None

    def feed(self, full: str) -> str | None:
        """The first complete tool request in `full` (the reply so far), or None; `value` is the parse so far."""
        if self.start < 0:
            brace = full.find("{", self.seen)
            if brace < 0:
                self.blocked = self.blocked or "[" in full[self.seen:]
                self.seen = len(full)
                return None
            self.blocked = self.blocked or "[" in full[self.seen:brace]
            self.start = self.seen = brace
            self.closed, self.partial = DirtyJson(), DirtyJson()
        new = full[self.seen:]
        self.seen = len(full)
        assert self.closed is not None and self.partial is not None
        self.value = self.partial.feed(new)
        if self.blocked or self.request is not None:
            return self.request
        self.closed.feed(new)
        if self.closed.completed and self.closed.end is not None:
            obj = full[self.start:self.start + self.closed.end]
            if obj != self._checked:
                self._checked = obj
                if isinstance(parse_tool_request(obj), ToolRequest):
                    self.request = obj
        return self.request


__all__ = ["ReplyWatch"]
