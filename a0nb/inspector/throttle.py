"""Coalescing of stream updates (the latest value per key, at most one emit per interval, a trailing flush
by timer) and the display sinks a live view is shown through (IPython's display, or a fake in tests)."""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Protocol


class Throttle:
    """Keeps the latest value per key and emits at most once per `interval` (trailing flush by timer)."""

    def __init__(self, emit: Callable[[dict[str, Any]], None], interval: float = 0.05,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.emit, self.interval, self.clock = emit, interval, clock
        self.flushes = 0
        self._pending: dict[str, Any] = {}
        self._last = float("-inf")
        self._timer: threading.Timer | None = None
        self._lock = threading.RLock()

    def push(self, key: str, value: Any) -> None:
        with self._lock:
            self._pending[key] = value
            if self._timer is not None:
                return
            wait = self._last + self.interval - self.clock()
            if wait <= 0:
                self._flush()
                return
            timer = threading.Timer(wait, self._due)
            timer.daemon = True
            self._timer = timer
            timer.start()

    def _due(self) -> None:
        with self._lock:
            if self._timer is not threading.current_thread():
                return  # cancelled by flush() while this one was waiting for the lock
            self._timer = None
            if self._pending:
                self._flush()

    def _flush(self) -> None:
        batch, self._pending = self._pending, {}
        self._last = self.clock()
        self.flushes += 1
        self.emit(batch)

    def flush(self) -> None:
        """Emit what is pending now (end of a stream, before a discrete event)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._pending:
                self._flush()

    def now(self, fn: Callable[[], None]) -> None:
        """Run a discrete update in order with the stream: pending values first."""
        with self._lock:
            self.flush()
            fn()


class DisplaySink(Protocol):
    def show(self, obj: Any, display_id: str) -> None: ...
    def update(self, obj: Any, display_id: str) -> None: ...


class IPythonDisplay:
    """The real front end: IPython's display with a display_id, updated in place."""

    def show(self, obj: Any, display_id: str) -> None:
        from IPython.display import display
        display(obj, display_id=display_id)

    def update(self, obj: Any, display_id: str) -> None:
        from IPython.display import update_display
        update_display(obj, display_id=display_id)
