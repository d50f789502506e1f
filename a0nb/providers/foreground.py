"""Whether an agent turn is running in this process right now: background warm-ups (litellm's
multi-second import) start only once no turn has run for a moment, so they never slow a turn that does not use them."""
from __future__ import annotations

import threading

__all__ = ["FOREGROUND", "Foreground"]


class Foreground:
    """A counter of running turns (nested and concurrent ones add up); `with FOREGROUND:` around a turn."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._count = 0
        self._entries = 0  # turns ever started: tells a quiet period that one began and ended in between

    def __enter__(self) -> Foreground:
        with self._changed:
            self._count += 1
            self._entries += 1
            self._changed.notify_all()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._changed:
            self._count -= 1
            self._changed.notify_all()

    @property
    def busy(self) -> bool:
        return self._count > 0

    def wait_quiet(self, quiet: float) -> None:
        """Block until no turn has run for `quiet` seconds: a turn that starts meanwhile restarts the wait."""
        with self._changed:
            while True:
                self._changed.wait_for(lambda: self._count == 0)
                entries = self._entries
                if not self._changed.wait_for(lambda: self._entries != entries, timeout=quiet):
                    return


# Process-wide by nature, like the imports it arbitrates: every agent's turns count.
FOREGROUND = Foreground()
