"""The typed seams between the Agent and the parts it is made of: what the loop (`LoopAgent`) and
the model calls (`ModelHost`) and a turn (`TurnAgent`) need of an agent, so none imports the Agent."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Protocol, Sequence

if TYPE_CHECKING:
    from a0nb.diagnostics import Diagnostics
    from a0nb.engine.calls import ModelCalls
    from a0nb.engine.config import ProjectState
    from a0nb.engine.control import TurnControl
    from a0nb.engine.extract import ToolRequest
    from a0nb.engine.history import History, Message
    from a0nb.engine.loop_data import LoopData
    from a0nb.engine.records import CallRecord
    from a0nb.engine.shared import Shared
    from a0nb.engine.tool import Tool, Tools
    from a0nb.engine.turn import Turn
    from a0nb.files.extensions import Extensions
    from a0nb.files.hierarchy import Hierarchy
    from a0nb.files.loader import ModuleLoader
    from a0nb.files.secrets import Secrets
    from a0nb.providers.base import ModelReply
    from a0nb.settings import Settings


class Compactor(Protocol):
    """Compacts an agent's history (registered by the `agent_init` extension `_20_compactor`)."""

    def __call__(self, agent: Any, force: bool = False) -> Awaitable[Any]: ...


class Checkpointed(Protocol):
    """Fires extension points and stops at checkpoints (interrupts, interventions)."""

    def fire(self, point: str, **kwargs: Any) -> Awaitable[None]: ...

    def checkpoint(self, ld: "LoopData | None" = None) -> None: ...

    def hist_add_ai_response(self, text: str) -> "Message": ...

    @property
    def settings(self) -> "Settings": ...


class ModelHost(Checkpointed, Protocol):
    """What the model calls (`a0nb.engine.calls.ModelCalls`) need of the agent that holds them."""

    shared: "Shared"
    number: int
    turns: "list[Turn]"
    hierarchy: "Hierarchy"
    loader: "ModuleLoader"
    tools: "Tools"
    extensions: "Extensions"
    intervention: str | None  # a message for the running turn (the checkpoint takes it)
    compactor: "Compactor | None"

    @property
    def superior_record(self) -> "CallRecord | None": ...

    @property
    def workdir(self) -> Path: ...

    @property
    def secrets(self) -> "Secrets": ...

    async def prepare_prompt(self, ld: "LoopData") -> list[dict[str, Any]]: ...


class LoopAgent(Checkpointed, Protocol):
    """What the loop (`a0nb.engine.loop`) needs of the agent it runs."""

    last_user_message: "Message | None"
    loop_data: "LoopData | None"  # the monologue in progress (Agent Zero's agent.loop_data)
    models: "ModelCalls"
    project_state: "ProjectState"

    async def prepare_prompt(self, ld: "LoopData") -> list[dict[str, Any]]: ...

    async def call_chat_model(self, ld: "LoopData", messages: list[dict[str, Any]]) -> "ModelReply": ...

    async def finish_record(self, ld: "LoopData") -> None: ...

    def hist_add_warning(self, message: str) -> "Message": ...

    async def format_error(self, exc: BaseException) -> str: ...

    def read_prompt(self, name: str, /, **kwargs: Any) -> str: ...

    def get_tool(self, request: "ToolRequest", message: str, ld: "LoopData") -> "Tool": ...

    def tool_error_text(self, tool_name: str, exc: BaseException) -> str: ...

    async def handle_exception(self, location: str, exception: BaseException) -> None: ...


class TurnAgent(LoopAgent, Protocol):
    """What running one turn (`a0nb.engine.loop.run_turn`) needs of the agent."""

    history: "History"
    control: "TurnControl"
    models: "ModelCalls"
    intervention: str | None
    diagnostics: "Diagnostics"

    @property
    def workdir(self) -> Path: ...

    def parse_prompt(self, name: str, /, **kwargs: Any) -> Any: ...

    def hist_add_message(self, ai: bool, content: Any, kind: str = "other", **metadata: Any) -> "Message": ...

    def mask(self, value: Any) -> Any: ...

    def start_turn(self, turn: "Turn") -> str: ...

    def hist_add_user_message(self, text: str, attachments: Sequence[Any] = (),
                              system_message: Sequence[str] = ()) -> "Message": ...

    async def monologue(self) -> str: ...
