"""Agent Zero's `agent` module: `Agent`, `AgentContext`, `AgentConfig`, `LoopData`, `UserMessage`.

An upstream `Agent` is a view of an a0nb agent with Agent Zero's attributes and signatures (`context`,
`config`, `agent_name`, `number`, `get_data`/`set_data`, sync `hist_add_*`, `handle_intervention`, ...);
everything else is the a0nb agent's own. Extensions and tools from Agent Zero files get this view as
`self.agent`. `Agent(number, config, context)` builds a new a0nb agent, as upstream code does."""
from __future__ import annotations

import contextvars
import os
import uuid
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar

from a0nb.ext import Agent as EngineAgent
from a0nb.ext import LoopData as _LoopData
from a0nb.ext import section
from a0nb.errors import A0Error
from a0nb.compat.helpers.log import Log

_CURRENT: contextvars.ContextVar["Agent | None"] = contextvars.ContextVar("a0nb_compat_agent", default=None)
_VIEW = "_a0nb_compat_view"
LOG_EXTENSION = "agent_zero_log"  # moves upstream log items into call records
STREAM_LOG_EXTENSION = "_10_agent_zero_log_item"  # upstream's per-pass "generating" log item
RECORDED_LOG_TYPES = frozenset({"warning", "error", "hint", "info"})


def current() -> "Agent | None":
    """The agent whose upstream extension or tool runs now (for helpers Agent Zero calls without one)."""
    return _CURRENT.get()


def current_engine(context: Any = None) -> Any:
    """The a0nb agent behind a context's first agent, else behind `current()` (None outside an agent's run)."""
    agent = getattr(context, "agent0", None) if context is not None else None
    return getattr(agent if agent is not None else _CURRENT.get(), "_engine", None)


class AgentContextType(Enum):
    USER = "user"
    TASK = "task"
    BACKGROUND = "background"


@dataclass
class AgentConfig:
    mcp_servers: str = ""
    profile: str = ""
    knowledge_subdirs: list[str] = field(default_factory=lambda: ["default", "custom"])
    additional: dict[str, Any] = field(default_factory=dict)


@dataclass
class UserMessage:
    message: str
    attachments: list[str] = field(default_factory=list)
    system_message: list[str] = field(default_factory=list)
    id: str = ""


class LoopData(_LoopData):
    """a0nb's LoopData (the same fields as upstream's), also built from keyword arguments as upstream's is."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        for key, value in kwargs.items():
            setattr(self, key, value)


class AgentContext:
    """A chat: its id, log, data and first agent. Upstream keeps contexts in a process-wide registry
    (`AgentContext.get(id)`), which upstream code relies on; a0nb keeps it on this class."""

    _contexts: ClassVar[dict[str, "AgentContext"]] = {}

    def __init__(self, config: AgentConfig | None = None, id: str | None = None, agent0: "Agent | None" = None,
                 type: AgentContextType = AgentContextType.USER, **kwargs: Any) -> None:
        self.id = id or uuid.uuid4().hex[:8]
        self.config = config or AgentConfig()
        self.type = type
        self.log = Log(self._log_changed)
        self.data: dict[str, Any] = {}
        self.output_data: dict[str, Any] = {}
        self.paused = False
        self.streaming_agent: Agent | None = None
        self.task = None
        self.agent0: Agent | None = agent0
        self.notifications: list[dict[str, Any]] = []
        self.pending_log: list[str] = []
        AgentContext._contexts[self.id] = self

    @staticmethod
    def get(id: str) -> "AgentContext | None":
        return AgentContext._contexts.get(id)

    @staticmethod
    def all() -> list["AgentContext"]:
        return list(AgentContext._contexts.values())

    @staticmethod
    def remove(id: str) -> "AgentContext | None":
        return AgentContext._contexts.pop(id, None)

    def get_data(self, key: str, recursive: bool = True) -> Any:
        if key not in self.data and key == "project":  # (the active project: the notebook folder with .a0proj/)
            from a0nb.compat.helpers.projects import notebook_project_name
            return notebook_project_name(self)
        return self.data.get(key)

    def set_data(self, key: str, value: Any, recursive: bool = True) -> None:
        self.data[key] = value

    def get_output_data(self, key: str, recursive: bool = True) -> Any:
        return self.output_data.get(key)

    def set_output_data(self, key: str, value: Any, recursive: bool = True) -> None:
        self.output_data[key] = value

    def get_agent(self) -> "Agent | None":
        return self.streaming_agent or self.agent0

    def is_running(self) -> bool:
        return False  # a notebook turn runs to its end before the next cell runs

    def get_notification_manager(self) -> Any:
        from a0nb.compat.helpers.notification import NotificationManager
        return NotificationManager(self.notifications)

    def _log_changed(self, item: Any, new: bool) -> None:
        """Warnings, errors, hints and infos an upstream file logs go into the record of the model call
        they happened during (the inspector shows a record's diagnostics); streaming items do not."""
        agent = self.streaming_agent or self.agent0
        if new and agent is not None and item.type in RECORDED_LOG_TYPES:
            text = " ".join(t for t in (item.heading, item.content) if t)
            self.pending_log.append(str(agent._engine.mask(f"log {item.type}: {text}")))

    def flush_log(self, record: Any) -> None:
        """At `call_recorded`: the items logged since the previous record belong to this one."""
        record.diagnostics.extend(self.pending_log)
        self.pending_log.clear()

    def reset(self) -> None:
        self.log.reset()
        if self.agent0 is not None:
            self.agent0._engine.reset()



class Agent:
    """Agent Zero's Agent: a view of an a0nb agent (see the module docstring)."""

    DATA_NAME_SUPERIOR = "_superior"
    DATA_NAME_SUBORDINATE = "_subordinate"
    DATA_NAME_CTX_WINDOW = "ctx_window"

    def __init__(self, number: int = 0, config: AgentConfig | None = None, context: AgentContext | None = None,
                 *, _engine: Any = None) -> None:
        config = config or AgentConfig()
        if _engine is None:
            _engine = _new_engine(number, config, context)
        object.__setattr__(self, "_engine", _engine)
        _engine.__dict__[_VIEW] = self
        self.config = config
        self.agent_name = f"A{number if _engine is None else _engine.number}"
        superior = getattr(_engine, "superior", None)
        if context is None and superior is not None:
            context = Agent.of(superior).context
        self.context: AgentContext = context or AgentContext(config=config, agent0=self)
        if self.context.agent0 is None:
            self.context.agent0 = self
        context_ = self.context
        _engine.register_extension("call_recorded", lambda record: context_.flush_log(record), name=LOG_EXTENSION)
        _engine.register_extension("before_main_llm_call", self._log_for_stream, name=STREAM_LOG_EXTENSION)
        self.intervention: UserMessage | None = None
        if self.loop_data.iteration >= 0:  # the view was first asked for in a loop pass: its item, too
            self._log_for_stream(self.loop_data)

    @classmethod
    def of(cls, agent: Any) -> "Agent":
        """The one view of an a0nb agent (a view is its own view)."""
        if isinstance(agent, Agent):
            return agent
        view = agent.__dict__.get(_VIEW)
        if view is None:
            profile = agent.profile if agent.profile != "default" else ""
            view = cls(agent.number, AgentConfig(profile=profile), _engine=agent)
        return view

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_engine"), name)

    # -- Agent Zero's attributes ------------------------------------------------------------------
    @property
    def number(self) -> int:
        return int(self._engine.number)

    @property
    def loop_data(self) -> _LoopData:
        """The monologue in progress (before the first one: an empty LoopData, as upstream starts with)."""
        if self._engine.loop_data is None:
            self._engine.loop_data = LoopData()
        return self._engine.loop_data  # type: ignore[no-any-return]

    @loop_data.setter
    def loop_data(self, value: _LoopData) -> None:
        self._engine.loop_data = value

    def _log_for_stream(self, loop_data: _LoopData) -> None:
        """Upstream's core opens one `agent` log item per loop pass before the main model call and keeps it in
        `loop_data.params_temporary["log_item_generating"]`; its stream extensions update that item."""
        if "log_item_generating" not in loop_data.params_temporary:
            loop_data.params_temporary["log_item_generating"] = self.context.log.log(
                type="agent", heading=f"{self.agent_name}: Calling LLM...", id=str(uuid.uuid4()))

    @property
    def data(self) -> dict[str, Any]:
        return self._engine.data  # type: ignore[no-any-return]

    @property
    def history(self) -> Any:
        return self._engine.history

    def get_data(self, field: str) -> Any:
        return self._engine.data.get(field)

    def set_data(self, field: str, value: Any) -> None:
        self._engine.data[field] = value

    def read_prompt(self, file: str, **kwargs: Any) -> str:
        """The text, as upstream; it also carries the prompt files it came from (a str subclass), so a section an
        upstream extension appends as it is names its files in the inspector, as a0nb's own sections do."""
        text = str(self._engine.read_prompt(file, **kwargs))
        try:
            sources = self._engine.render_prompt(file, **kwargs).sources  # (a cached render)
        except A0Error:  # (provenance only: the text is what upstream's call returns)
            sources = ()
        return section(_Read(text, sources))

    def parse_prompt(self, _prompt_file: str, **kwargs: Any) -> Any:
        return self._engine.parse_prompt(_prompt_file, **kwargs)

    # -- history, with upstream's (sync) signatures --------------------------------------------------
    def hist_add_message(self, ai: bool, content: Any, tokens: int = 0, id: str = "") -> Any:
        return self._engine.hist_add_message(ai, content)

    def hist_add_user_message(self, message: UserMessage | str, intervention: bool = False) -> Any:
        if isinstance(message, str):
            message = UserMessage(message)
        return self._engine.hist_add_user_message(message.message, attachments=message.attachments,
                                                  system_message=message.system_message)

    def hist_add_ai_response(self, message: str, id: str = "") -> Any:
        self.loop_data.last_response = message
        return self._engine.hist_add_ai_response(message)

    def hist_add_warning(self, message: Any, id: str = "") -> Any:
        return self._engine.hist_add_warning(message)

    def hist_add_tool_result(self, tool_name: str, tool_result: str, **kwargs: Any) -> Any:
        """As upstream: the whole `data` (a Response's `additional`, what extensions add) is the message."""
        kwargs.pop("id", None)
        data = {"tool_name": tool_name, "tool_result": tool_result, **kwargs}
        self._engine.fire_sync("hist_add_tool_result", data=data)
        return self._engine.hist_add_message(False, data, "tool_result")

    def concat_messages(self, messages: Any = None) -> str:
        return "\n".join(str(m.content) for m in self._engine.history.messages())

    # -- the loop ---------------------------------------------------------------------------------
    async def monologue(self) -> str:
        return str(await self._engine.monologue())

    async def handle_intervention(self, progress: str = "") -> None:
        self._engine.checkpoint(None)

    async def wait_if_paused(self) -> None:
        return None

    async def call_utility_model(self, system: str, message: str, callback: Any = None,
                                 background: bool = False) -> str:
        response = await self._engine.call_utility_model(system, message, on_chunk=callback, background=background)
        if response is None:
            raise RuntimeError("no utility model is configured (setting utility_model / A0NB_UTILITY_MODEL)")
        return str(response)

    def __repr__(self) -> str:
        return f"<Agent Zero view of {self._engine!r} as {self.agent_name}>"


@dataclass(frozen=True)
class _Read:
    """A prompt read through the view: its text and the files it was rendered from (what `section` keeps)."""
    text: str
    sources: tuple[Any, ...]


def _new_engine(number: int, config: AgentConfig, context: AgentContext | None) -> Any:
    superior = context.agent0 if context is not None else None
    if superior is not None:
        engine = superior._engine.subordinate_agent(profile=config.profile or None, reset=True)
        return engine
    return EngineAgent(Path(os.getcwd()), profile=config.profile or "default")


def enter(agent: Any) -> "Agent":
    """The view of `agent`, made current for helpers that take no agent."""
    view = Agent.of(agent)
    _CURRENT.set(view)
    return view


__all__ = ["Agent", "AgentContext", "AgentContextType", "AgentConfig", "LoopData", "UserMessage", "current"]
