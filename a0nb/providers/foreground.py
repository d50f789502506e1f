"""Whether an agent turn is running in this process right now: background warm-ups (litellm's
multi-second import) give way to it, so configuring a real model never slows a turn that does not use it."""
from __future__ import annotations

import threading

__all__ = ["FOREGROUND", "Foreground"]


class Foreground:
    """A counter of running turns (nested and concurrent ones add up); `with FOREGROUND:` around a turn."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    def __enter__(self) -> Foreground:
        with self._lock:
            self._count += 1
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._count -= 1

    @property
    def busy(self) -> bool:
        return self._count > 0


# Process-wide by nature, like the imports it arbitrates: every agent's turns count.
FOREGROUND = Foreground()
