"""The state of one monologue (Agent Zero's LoopData, plus the provenance of extras and sections) and
the `Intervention` signal a checkpoint raises when the user sent a message mid-turn."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from a0nb.engine.history_output import HistoryOutput
from a0nb.engine.records import CallRecord

if TYPE_CHECKING:
    from a0nb.engine.history import Message, OutputItem
    from a0nb.engine.tool import Tool


@dataclass
class LoopData:
    """State of one monologue; fields as in Agent Zero, plus the provenance of extras and sections."""

    user_message: "Message | None" = None
    iteration: int = -1
    system: list[str] = field(default_factory=list)
    history_output: "list[OutputItem]" = field(default_factory=list)
    extras_temporary: dict[str, Any] = field(default_factory=dict)
    extras_persistent: dict[str, Any] = field(default_factory=dict)
    last_response: str = ""
    params_temporary: dict[str, Any] = field(default_factory=dict)
    params_persistent: dict[str, Any] = field(default_factory=dict)
    current_tool: "Tool | None" = None
    extras_origin: dict[str, Any] = field(default_factory=dict)
    system_origin: dict[int, Any] = field(default_factory=dict)
    record: CallRecord | None = None
    streamed: str = ""
    no_progress: int = 0
    ctx_retried: bool = False  # one compaction-and-retry per monologue after a context-window error



class _ToItems:
    """`LoopData.history_output` on assignment: Agent Zero's dicts, assigned or appended later, become items.
    Only setting passes through here (no __get__: a read is the instance's own value), and only this field's."""

    def __set__(self, ld: LoopData, value: Any) -> None:
        ld.__dict__["history_output"] = value if value.__class__ is HistoryOutput else HistoryOutput(value)


setattr(LoopData, "history_output", _ToItems())  # (after the dataclass is made: its __init__ sets it through this)


class Intervention(Exception):
    """Raised at a checkpoint when the user sent a message while the agent was running."""
