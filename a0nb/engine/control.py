"""Stopping a running turn: its task, its event loop and its cancel flag (inherited by subordinates
and jobs through the context), set from any thread by `Agent.interrupt` and read at checkpoints."""
from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from a0nb.errors import TurnError



class CancelFlag:
    """One turn's cancel flag: `raised` is read at every checkpoint (a plain attribute, no call), set once by
    `set()` from any thread (a bool store is atomic)."""

    __slots__ = ("raised",)

    def __init__(self) -> None:
        self.raised = False

    def set(self) -> None:
        self.raised = True

    def is_set(self) -> bool:
        return self.raised


_NEVER = CancelFlag()  # outside any turn: never raised (so a checkpoint needs no None test)
_CANCEL: contextvars.ContextVar[CancelFlag] = contextvars.ContextVar("a0nb_cancel", default=_NEVER)

# The flag of the turn this code runs for (ContextVar.get itself, no Python frame): `turn_flag().raised`
turn_flag = _CANCEL.get


def cancelled() -> bool:
    """True when the turn this code runs for was interrupted."""
    return _CANCEL.get().raised


class TurnControl:
    """The running turn of one agent. Each turn has its own cancel flag, so a turn that outlived an
    interrupt can never be revived by the next one."""

    def __init__(self) -> None:
        self.cancel: CancelFlag | None = None
        self.task: asyncio.Task[Any] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._token: contextvars.Token[CancelFlag] | None = None

    def start(self) -> None:
        """Called inside the turn's task."""
        self.task, self.loop = asyncio.current_task(), asyncio.get_running_loop()
        self.cancel = CancelFlag()
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
