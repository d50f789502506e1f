"""Stopping a running turn: its task, its event loop and its cancel flag (inherited by subordinates
and jobs through the context), set from any thread by `Agent.interrupt` and read at checkpoints."""
from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any

from a0nb.errors import TurnError

_CANCEL: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("a0nb_cancel", default=None)


def cancelled() -> bool:
    """True when the turn this code runs for was interrupted."""
    event = _CANCEL.get()
    return event is not None and event.is_set()


class TurnControl:
    """The running turn of one agent. Each turn has its own cancel flag, so a turn that outlived an
    interrupt can never be revived by the next one."""

    def __init__(self) -> None:
        self.cancel: threading.Event | None = None
        self.task: asyncio.Task[Any] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._token: contextvars.Token[threading.Event | None] | None = None

    def start(self) -> None:
        """Called inside the turn's task."""
        self.task, self.loop = asyncio.current_task(), asyncio.get_running_loop()
        self.cancel = threading.Event()
        self._token = _CANCEL.set(self.cancel)

    def ensure_idle(self, turn: int) -> None:
        """TurnError while a turn runs: a second concurrent ask would interleave the history."""
        if self.task is not None and not self.task.done():
            raise TurnError(f"this agent is still running turn {turn}; wait for it to finish (or interrupt it) "
                            "before asking again, or use a second Agent to work in parallel")

    def end(self) -> None:
        if self._token is not None:
            _CANCEL.reset(self._token)
            self._token = None
        self.task = None

    def interrupt(self) -> None:
        """Stop the running turn at its next checkpoint (thread-safe)."""
        if self.cancel is not None:
            self.cancel.set()
        task, loop = self.task, self.loop
        if task is not None and loop is not None and not task.done():
            loop.call_soon_threadsafe(task.cancel)


def cancel_flag() -> threading.Event | None:
    """The running turn's cancel flag (None outside a turn), for a hot loop (each streamed chunk) that reads
    it once and then asks `is_set()` instead of `cancelled()` per item; it is the same flag all turn long."""
    return _CANCEL.get()
