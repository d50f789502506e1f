"""A batch's results: one Turn per item, in input order, with the items, the run's figures and a table."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

from a0nb.engine.turn import Turn

__all__ = ["MapResult", "Progress"]


@dataclass
class Progress:
    """Counts while a batch runs (what a progress bar shows): done, failed, running, cost so far, ETA."""

    total: int
    done: int = 0
    failed: int = 0
    running: int = 0
    cost: float = 0.0
    started: float = field(default_factory=time.monotonic)
    listener: Callable[["Progress"], None] | None = None

    @property
    def finished(self) -> int:
        return self.done + self.failed

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def eta(self) -> float | None:
        """Seconds left at the pace so far (None before the first item finishes)."""
        if not self.finished:
            return None
        return self.elapsed / self.finished * (self.total - self.finished)

    def start(self) -> None:
        self.running += 1
        self.notify()

    def finish(self, turn: Turn, was_running: bool = True) -> None:
        self.running -= 1 if was_running else 0
        if turn.error is None:
            self.done += 1
        else:
            self.failed += 1
        self.cost += turn.cost
        self.notify()

    def notify(self) -> None:
        if self.listener is not None:
            self.listener(self)

    def line(self) -> str:
        """tqdm's order: count, then rates and figures."""
        eta = self.eta
        shown = "?" if eta is None else time.strftime("%M:%S", time.gmtime(eta)) if eta < 3600 else f"{eta / 3600:.1f} h"
        return (f"{self.finished}/{self.total} · {self.done} done · {self.failed} failed · {self.running} running"
                f" · ETA {shown} · ${self.cost:.4f}")


class MapResult(list):  # type: ignore[type-arg]
    """The Turns of `Agent.map`, in input order (a list); `.items`, `.prompts`, `.failed`, `.to_pandas()`."""

    # drawn by the inspector (a layer above), registered there as for Turn; without it: text
    display: ClassVar[Callable[["MapResult"], Any] | None] = None

    def __init__(self, turns: list[Turn], items: list[Any], prompts: list[str], *, executor: str = "threads",
                 elapsed: float = 0.0, interrupted: bool = False) -> None:
        super().__init__(turns)
        self.items, self.prompts = items, prompts
        self.executor, self.elapsed, self.interrupted = executor, elapsed, interrupted

    @property
    def texts(self) -> list[str]:
        return [t.text for t in self]

    @property
    def errors(self) -> list[str | None]:
        return [t.error for t in self]

    @property
    def failed(self) -> list[int]:
        """Indices of the items that ended with an error (interrupted ones included)."""
        return [i for i, t in enumerate(self) if t.error is not None]

    @property
    def cost(self) -> float:
        return sum(t.cost for t in self)

    def records(self) -> list[dict[str, Any]]:
        return [{"item": item, "prompt": prompt, "text": t.text, "error": t.error, "calls": len(t.calls),
                 "cost": t.cost, "interrupted": t.interrupted}
                for item, prompt, t in zip(self.items, self.prompts, self)]

    def to_pandas(self) -> Any:
        """One row per item: item, prompt, text, error, calls, cost, interrupted (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            from a0nb.errors import ConfigError
            raise ConfigError("to_pandas() needs pandas: pip install pandas (or use .records())") from None
        return pd.DataFrame(self.records())

    def __repr__(self) -> str:
        state = ", interrupted" if self.interrupted else ""
        return (f"MapResult({len(self)} items, {len(self) - len(self.failed)} ok, {len(self.failed)} failed, "
                f"executor={self.executor!r}{state})")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        if MapResult.display is None:
            return {"text/plain": repr(self)}
        return MapResult.display(self)  # type: ignore[no-any-return]
