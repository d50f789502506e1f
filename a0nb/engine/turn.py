"""A turn: one user message and everything the agent did for it — the answer, the model calls,
and the transcript built from the call records."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from a0nb.engine.records import CallRecord


@dataclass
class Step:
    call: int
    thoughts: tuple[str, ...]
    headline: str
    tool_name: str
    tool_args: dict[str, Any]
    result: str | None


class TurnDisplay(Protocol):
    """A turn's rich display (text/plain + HTML with metadata), as IPython's `_repr_mimebundle_` returns it."""

    def __call__(self, turn: "Turn") -> Any: ...


@dataclass
class Turn:
    index: int
    message: str
    text: str = ""
    calls: list[CallRecord] = field(default_factory=list)
    error: str | None = None
    interrupted: bool = False
    compactions: list[Any] = field(default_factory=list)
    expansions: list[dict[str, Any]] = field(default_factory=list)  # feature completions applied to `message`
    # The rich display is drawn by the inspector, a layer above the engine: it registers itself here
    # (`a0nb.inspector` on import; `import a0nb` wires a lazy one). Without it a turn shows as text.
    display: ClassVar[TurnDisplay | None] = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def cost(self) -> float:
        """The provider-reported cost of this turn's model calls (0.0 when none reported one)."""
        return sum(c.cost or 0.0 for c in self.calls)

    @property
    def steps(self) -> list[Step]:
        out = []
        for c in self.calls:
            if c.role != "chat" or not c.tool_request:
                continue
            req = c.tool_request
            out.append(Step(c.index, tuple(req.get("thoughts", ())), str(req.get("headline", "")),
                            str(req.get("tool_name", "")), dict(req.get("tool_args", {})), c.tool_result))
        return out

    def __repr__(self) -> str:
        status = "interrupted" if self.interrupted else ("error" if self.error else "ok")
        return f"Turn({self.index}, {status}, {len(self.calls)} calls, text={self.text[:60]!r})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        if Turn.display is None:
            return {"text/plain": repr(self)}
        return Turn.display(self)
