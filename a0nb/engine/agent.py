"""The Agent: the public Python API (`ask`, `ask_async`, `reset`, registration) and the steps the
loop sequences — prompt preparation, model calls with call records, history adds, tool lookup."""
from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any, Callable, Sequence

from a0nb.diagnostics import Diagnostics
from a0nb.engine import composition, loop, section_memo
from a0nb.engine.calls import ModelCalls
from a0nb.engine.config import AgentSettings, ProjectState, profiles, set_profile, warm_up
from a0nb.engine.control import TurnControl, turn_flag
from a0nb.engine.extract import ToolRequest
from a0nb.engine.history import History, Message
from a0nb.engine.jobs import Jobs
from a0nb.engine.loop_data import LoopData
from a0nb.engine.protocols import Compactor
from a0nb.engine.records import CallRecord
from a0nb.engine.registration import Registration
from a0nb.engine.shared import Shared, VersionedDict
from a0nb.engine.tool import Tool, Tools
from a0nb.engine.turn import Turn
from a0nb.engine.turn_start import apply_plugin_sources
from a0nb.errors import A0Error, ConfigError, RepairableError, TurnInterrupted
from a0nb.files.extensions import Extensions, extensible, fire_point, fire_point_sync
from a0nb.files.feature_text import expand_completions
from a0nb.files.features import features
from a0nb.files.hierarchy import Hierarchy
from a0nb.files.loader import ModuleLoader
from a0nb.files.projects import Project
from a0nb.files.prompts import PromptEngine, Rendered, prompt_dirs
from a0nb.files.roots import Root
from a0nb.files.secrets import Secrets
from a0nb.providers.base import ModelConfig, ModelReply, Provider
from a0nb.providers.extension import LoadedExtension
from a0nb.settings import Settings

__all__ = ["Agent", "Shared", "VersionedDict"]


class Agent(Registration):
    """Agent Zero's agent, in a notebook folder. `ask()` runs one user message to an answer."""

    def __init__(self, workdir: str | Path = ".", model: str | Sequence[Any] | None = None, *,
                 utility_model: str | None = None, profile: str = "default",
                 namespace: dict[str, Any] | None = None, home: str | Path | None = None,
                 settings: dict[str, Any] | None = None, mcp_servers: Any = None, entry_points: bool = True,
                 _superior: "Agent | None" = None, _shared: Shared | None = None) -> None:
        workdir = Path(workdir).resolve()
        if not workdir.is_dir():
            raise ConfigError(f"workdir {workdir} is not a folder")
        self.shared = _shared or Shared(workdir, Path(home) if home else None, namespace if namespace is not None else {})
        self.superior = _superior
        self.subordinate: Agent | None = None
        self.number: int = 0 if _superior is None else _superior.number + 1
        self.diagnostics = Diagnostics()
        self.hierarchy = Hierarchy(workdir, profile, home=self.shared.home, diagnostics=self.diagnostics,
                                   entry_points=entry_points)
        self.loader = ModuleLoader(self.diagnostics)
        self.extensions = Extensions(self.hierarchy, self.loader, self.diagnostics)
        self.tools = Tools(self.hierarchy, self.loader, self.diagnostics)
        self.prompts = PromptEngine(prompt_dirs(self.hierarchy.roots), self.diagnostics)
        self.prompts.trust_listings = True
        self._prompt_generation = self.hierarchy.generation
        self.project_state = ProjectState(self.diagnostics, self.shared.home)
        self.config = AgentSettings(self.hierarchy, self.diagnostics, self.shared.magic_settings,
                                    {"model": model if isinstance(model, str) else None,
                                     "utility_model": utility_model, **(settings or {}),
                                     **({"mcp_servers": mcp_servers} if mcp_servers is not None else {})},
                                    on_resolve=self._settings_resolved)
        self.models = ModelCalls(self)
        self.models.model_list = None if model is None or isinstance(model, str) else list(model)
        self.history = History()
        self.data: dict[str, Any] = {}  # free-form agent data for extensions (Agent Zero's get_data/set_data)
        self.compactor: Compactor | None = None  # set by the agent_init extension _20_compactor
        self.tool_prompt_kwargs: dict[str, dict[str, Any]] = {}  # per tool prompt file: its variables
        self.turns: list[Turn] = []
        self.last_user_message: Message | None = None
        self.loop_data: LoopData | None = None  # the monologue in progress (Agent Zero's agent.loop_data)
        self.intervention: str | None = None
        self.jobs = Jobs()
        self.control = TurnControl()
        self.composer = composition.Composer()
        try:  # agent_init extensions already run under the configured extension_timeout
            self.settings
        except (A0Error, ValueError, TypeError):
            pass  # a bad setting is reported by the first ask; until then the registry's default limit holds
        self.extensions.call_sync("agent_init", self)
        self._warm()

    # -- public API ---------------------------------------------------------------------------
    @property
    def workdir(self) -> Path:
        return self.hierarchy.workdir

    @property
    def profile(self) -> str:
        return self.hierarchy.profile

    @property
    def paths(self) -> list[Root]:
        self.refresh()
        return list(self.hierarchy.roots)

    @property
    def namespace(self) -> dict[str, Any]:
        return self.shared.namespace

    @property
    def calls(self) -> list[CallRecord]:
        return list(self.models.records)

    @property
    def current_record(self) -> CallRecord | None:
        """The chat call in progress (or the last one)."""
        return self.models.current

    @property
    def superior_record(self) -> CallRecord | None:
        return self.superior.models.current if self.superior is not None else None

    @property
    def settings(self) -> Settings:
        config = self.config  # (AgentSettings.get's first test, read here: no second call while nothing changed)
        settings = config.current
        if settings is not None and config.magic_seen == config.magic.version:
            return settings
        return config.get()

    def _settings_resolved(self, settings: Settings) -> None:
        self.extensions.timeout = settings.extension_timeout or None

    def configure(self, **values: Any) -> None:
        """Change settings for this agent (the call-argument layer)."""
        self.config.update(values)
        if "model" in values:
            self.models.forget_model_list()
            if not isinstance(values["model"], str) and values["model"] is not None:
                self.models.model_list, self.config.arguments["model"] = list(values["model"]), None
            else:
                self.models.model_list = None
        self.hierarchy.refresh()
        if "model" in values:
            self._warm()

    def _warm(self) -> None:
        warm_up(self.model_spec("chat"), self.models.custom_providers)

    def set_profile(self, profile: str) -> None:
        set_profile(self.hierarchy, self.diagnostics, profile)

    def profiles(self) -> dict[str, Any]:
        return profiles(self.hierarchy, self.diagnostics)

    def ask(self, message: str, **options: Any) -> Turn:
        """Run one user message to an answer (plain Python, IPython, or inside a running event loop)."""
        return self.shared.bridge.run(lambda: self.ask_async(message, **options), on_interrupt=self.interrupt)

    async def ask_background(self, message: str, **options: Any) -> Turn:
        """Like `ask`, awaited from another running loop (a kernel cell) that stays free meanwhile."""
        return await self.shared.bridge.run_async(lambda: self.ask_async(message, **options),
                                                  on_interrupt=self.interrupt)

    def map(self, items: Any, template: Any, **options: Any) -> Any:
        """Ask once per item, each by a fresh agent like this one (empty history): a MapResult of Turns in
        input order. `template`: "... {item} ..." or item -> prompt; options: concurrency=4, executor="threads"
        | "ray" | a concurrent.futures.Executor, address= (Ray), on_progress=. See a0nb/engine/batch."""
        from a0nb.engine.batch import map_items  # its modules load only when a batch runs
        return map_items(self, items, template, **options)

    def interrupt(self) -> None:
        """Stop the running turn at its next checkpoint (thread-safe)."""
        self.control.interrupt()

    async def ask_async(self, message: str, *, attachments: Sequence[Any] = (), history: bool = True) -> Turn:
        self.control.ensure_idle(len(self.turns))  # one turn at a time: two would interleave history
        turn = Turn(index=len(self.turns) + 1, message=message)
        self.turns.append(turn)
        return await loop.run_turn(self, turn, attachments, history)

    def reset(self) -> None:
        """Forget the conversation: history, agent data, turns, records and background jobs (cancelled);
        scripted models restart."""
        self.jobs.cancel_all()
        self.history = History()
        self.data.clear()
        self.compactor, self.tool_prompt_kwargs = None, {}
        self.turns.clear()
        self.models.records.clear()
        self.models.store.clear()
        self.models.current = None
        self.last_user_message = None
        self.shared.providers.clear()
        self.shared.loaded_skills.clear()
        if self.subordinate is not None:
            self.subordinate.jobs.cancel_all()
        self.subordinate = None
        self.extensions.call_sync("agent_init", self)

    def start_turn(self, turn: Turn) -> str:
        """Before a turn's first step: pick up changed files and `plugin_sources`, expand accepted feature
        completions in the message (`turn.expansions` says which); returns the message to send."""
        self.refresh()
        apply_plugin_sources(self)
        message, turn.expansions = expand_completions(features(self), turn.message)
        return message

    def refresh(self) -> None:
        """Pick up files added or edited next to the notebook (cheap when nothing changed)."""
        self.hierarchy.refresh()
        self.project_state.invalidate()  # project and secret set: looked at (cheaply) once per step
        self.config.watch_environment()
        if self._prompt_generation != self.hierarchy.generation:
            self.prompts.set_dirs(prompt_dirs(self.hierarchy.roots))
            self.prompts.invalidate()
            self._prompt_generation = self.hierarchy.generation

    # -- extension points -----------------------------------------------------------------------
    fire, fire_sync = fire_point, fire_point_sync  # (files/ext_chain.py: a point with no extension costs one call)

    @extensible
    async def monologue(self) -> str:
        return await loop.monologue(self)

    def checkpoint(self, ld: LoopData | None = None) -> None:
        if turn_flag().raised:
            raise TurnInterrupted("interrupted")
        if self.intervention is not None and ld is not None:
            loop.take_intervention(self, ld)

    def intervene(self, message: str) -> None:
        """Send a message to a running turn; it is taken at the next checkpoint (Agent Zero's intervention)."""
        self.intervention = message

    # -- prompts --------------------------------------------------------------------------------
    def render_prompt(self, name: str, /, **kwargs: Any) -> Rendered:
        return self.prompts.render(name, agent=self, **self._prompt_vars(kwargs))

    @extensible
    def read_prompt(self, name: str, /, **kwargs: Any) -> str:
        return self.prompts.text(name, self, self._prompt_vars(kwargs))

    @extensible
    def parse_prompt(self, name: str, /, **kwargs: Any) -> Any:
        return self.prompts.parse(name, agent=self, **self._prompt_vars(kwargs))

    def _prompt_vars(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """`.a0proj/variables.env` values are usable as `{{VAR}}` and in `{{if}}` in every prompt (as upstream);
        a value passed by the caller wins."""
        variables = self.project_state.project(self.hierarchy.workdir).variables  # (self.project, inlined)
        return {**variables, **kwargs} if variables else kwargs

    @extensible
    async def get_system_prompt(self, ld: LoopData) -> list[str]:
        system: list[str] = []
        ld.system_origin = {}
        await section_memo.fire_system_prompt(self, ld, system)  # (the `system_prompt` point, reused whole while
        return system                                             # nothing its sections depend on changed)

    @extensible
    async def prepare_prompt(self, ld: LoopData) -> list[dict[str, Any]]:
        self.refresh()
        await self.fire("message_loop_prompts_before", loop_data=ld)
        ld.system = await self.get_system_prompt(ld)
        ld.history_output = self.history.output()
        await self.fire("message_loop_prompts_after", loop_data=ld)
        extras = composition.extras_text(ld)
        messages, parts = self.composer.build(ld, self.composer.extras_message(self, extras), extras, self.shared.counter)
        messages, parts = self.models.masked(messages, parts)  # the request, as sent and as recorded
        ld.extras_temporary.clear()
        ld.record = self.models.new_record("chat", messages, parts, ld.iteration)
        return messages

    # -- model calls (held by `self.models`) -------------------------------------------------------
    def model_spec(self, role: str = "chat") -> str:
        return self.models.spec(role)

    def model_config(self, role: str = "chat") -> ModelConfig:
        return self.models.config(role)

    def provider(self, role: str = "chat") -> Provider:
        return self.models.provider(role)

    def provider_extensions(self) -> list[LoadedExtension]:
        return self.models.provider_extensions()

    @extensible
    async def call_chat_model(self, ld: LoopData, messages: list[dict[str, Any]]) -> ModelReply:
        return await self.models.chat(ld, messages)

    @extensible
    async def call_utility_model(self, system: str, message: str, purpose: str = "summary", on_chunk: Any = None,
                                 background: bool = False) -> str | None:
        """A utility call (summaries, compaction); None when no utility model is configured.
        `on_chunk` (async, one argument) gets each streamed piece of the answer."""
        return await self.models.utility(system, message, purpose, on_chunk, background)

    async def finish_record(self, ld: LoopData) -> None:
        await self.models.finish_record(ld)

    # -- history ----------------------------------------------------------------------------------
    @extensible
    def hist_add_message(self, ai: bool, content: Any, kind: str = "other", **metadata: Any) -> Message:
        content_data = {"content": content}
        self.fire_sync("hist_add_before", content_data=content_data, ai=ai)
        # masked here too, whatever the (overridable) hist_add_before extensions did
        return self.history.add(ai, self.mask(content_data["content"]), kind, **metadata)  # type: ignore[arg-type]

    @extensible
    def hist_add_user_message(self, text: str, attachments: Sequence[Any] = (), system_message: Sequence[str] = ()) -> Message:
        self.history.new_topic()
        content = self.parse_prompt("fw.user_message.md", message=text, attachments=list(attachments),
                                    system_message=list(system_message))
        msg = self.hist_add_message(False, loop.drop_empty(content), "user")
        self.last_user_message = msg
        return msg

    @extensible
    def hist_add_ai_response(self, text: str) -> Message:
        return self.hist_add_message(True, self.read_prompt("fw.ai_response.md", message=text), "ai")

    @extensible
    def hist_add_warning(self, message: str) -> Message:
        return self.hist_add_message(False, self.parse_prompt("fw.warning.md", message=message), "warning")

    @extensible
    async def hist_add_tool_result(self, tool_name: str, result: str, **additional: Any) -> Message:
        data = {"tool_name": tool_name, "tool_result": result, **additional}
        self.fire_sync("hist_add_tool_result", data=data)
        content = {"tool_name": data.pop("tool_name", tool_name), "tool_result": data.pop("tool_result", result)}
        for key in [k for k in data if k not in additional or data[k] is not additional[k]]:
            content[key] = data.pop(key)  # set by an extension: part of the message, as upstream's whole `data`
        return self.hist_add_message(False, content, "tool_result", **data)  # (the caller's keywords: metadata)

    @extensible
    async def handle_exception(self, location: str, exception: BaseException) -> None:
        """A repairable error goes back to the model as a warning; others are raised (Agent Zero's point)."""
        if not isinstance(exception, RepairableError):
            raise exception
        self.hist_add_warning(await self.format_error(exception))

    async def format_error(self, exc: BaseException) -> str:
        msg = {"message": str(exc)}
        await self.fire("error_format", msg=msg)
        return msg["message"]

    # -- tools ------------------------------------------------------------------------------------
    @extensible
    def get_tool(self, request: ToolRequest, message: str, ld: LoopData) -> Tool:
        return loop.create_tool(self, self.tools, request, message, ld)

    def tool_error_text(self, tool_name: str, exc: BaseException) -> str:
        text = f"tool {tool_name} failed with {type(exc).__name__}: {exc}"
        return self.read_prompt("fw.msg_critical_error.md", error_message=self.mask(text))

    def emit_tool_progress(self, tool: Tool, content: str) -> None:
        self.fire_sync("tool_output_update", ctx={"content": self.mask(content), "tool": tool.full_name})

    # -- project, secrets, clock ------------------------------------------------------------------------
    @property
    def project(self) -> Project:
        return self.project_state.current or self.project_state.project(self.hierarchy.workdir)  # (self.workdir, inlined)

    @property
    def secrets(self) -> Secrets:
        """The one masking set: `secrets.env`, `.env`, every credential in the environment (a turn's step: ProjectState)."""
        if (step := (ps := self.project_state).here.step) is ps.now and step is not None and self.control.task is not None:
            return step
        return ps.secrets(self.hierarchy.workdir, ((s := self.settings).api_key_env, s.utility_api_key_env),
                          self.control.task is not None)

    def skills(self) -> dict[str, Any]:
        """Every valid skill in the hierarchy's `skills/` folders, by name (earlier root wins)."""
        return self.shared.skills(self.diagnostics).get(self.hierarchy.labelled("skills"))

    def loaded_skills(self) -> list[str]:
        """The loaded-skill ledger (names, oldest first), shared by the agent and its subordinates."""
        return self.shared.loaded_skills

    def mask(self, value: Any) -> Any:
        return secrets.mask(value) if (secrets := self.secrets) else value

    def now(self) -> _dt.datetime:
        return self.config.now()

    async def run_on_main(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run `fn` on the thread that called `ask()` (user code, approval prompts)."""
        return await self.shared.bridge.on_main(fn, *args)

    def subordinate_agent(self, profile: str | None = None, reset: bool = False) -> "Agent":
        if self.subordinate is None or reset or (profile and self.subordinate.profile != profile):
            self.subordinate = Agent(self.workdir, profile=profile or self.profile, settings=dict(self.config.arguments),
                                     _superior=self, _shared=self.shared)
            self.subordinate.models.model_list = self.models.model_list
        return self.subordinate

    def __repr__(self) -> str:
        return (f"Agent(workdir={str(self.workdir)!r}, profile={self.profile!r}, model={self.model_spec('chat')!r}, "
                f"approval={self.config.get().approval!r})")
