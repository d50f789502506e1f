"""The Agent: the public Python API (`ask`, `ask_async`, `reset`, registration) and the steps the
loop sequences — prompt preparation, model calls with call records, history adds, tool lookup."""
from __future__ import annotations

import asyncio
import contextvars
import datetime as _dt
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from a0nb.engine import composition, loop
from a0nb.engine.calls import ModelCalls
from a0nb.engine.bridge import Bridge
from a0nb.diagnostics import Diagnostics
from a0nb.errors import A0Error, ConfigError, TurnInterrupted
from a0nb.files.extensions import Extensions, extensible
from a0nb.engine.extract import ToolRequest
from a0nb.providers.foreground import FOREGROUND
from a0nb.files.hierarchy import Hierarchy
from a0nb.engine.history import History, Message
from a0nb.engine.jobs import Jobs
from a0nb.files.loader import ModuleLoader
from a0nb.files.roots import Root
from a0nb.files.projects import Project, ProjectCache
from a0nb.files.prompts import PromptEngine, Rendered, prompt_dirs
from a0nb.providers.base import Provider
from a0nb.engine.records import CallRecord
from a0nb.files.secrets import Secrets
from a0nb.settings import Settings, resolve
from a0nb.engine.tokens import TokenCounter
from a0nb.engine.tool import Tool, ToolInfo, Tools
from a0nb.engine.turn import Turn


class VersionedDict(dict):  # type: ignore[type-arg]
    """The `%config` settings layer: a dict that counts its changes, so settings re-resolve only then."""

    version = 0

    def _bump(self) -> None:
        self.version += 1

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self._bump()

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        self._bump()

    def update(self, *args: Any, **kwargs: Any) -> None:
        super().update(*args, **kwargs)
        self._bump()

    def pop(self, *args: Any) -> Any:
        self._bump()
        return super().pop(*args)

    def clear(self) -> None:
        super().clear()
        self._bump()


@dataclass
class Shared:
    """What an agent and its subordinates share: the loop bridge, models, namespace, records counter."""

    workdir: Path
    home: Path | None
    namespace: dict[str, Any]
    bridge: Bridge = field(default_factory=Bridge)
    providers: dict[str, Provider] = field(default_factory=dict)
    counter: TokenCounter = field(default_factory=TokenCounter)
    call_index: int = 0
    magic_settings: "VersionedDict" = field(default_factory=lambda: VersionedDict())
    approver: Callable[[str, str], bool] | None = None
    data: dict[str, Any] = field(default_factory=dict)  # chat-wide data (the loaded-skill ledger lives here)


class Agent(ModelCalls):
    """Agent Zero's agent, in a notebook folder. `ask()` runs one user message to an answer."""

    def __init__(self, workdir: str | Path = ".", model: str | Sequence[Any] | None = None, *,
                 utility_model: str | None = None, profile: str = "default",
                 namespace: dict[str, Any] | None = None, home: str | Path | None = None,
                 settings: dict[str, Any] | None = None, entry_points: bool = True,
                 _superior: "Agent | None" = None, _shared: Shared | None = None) -> None:
        workdir = Path(workdir).resolve()
        if not workdir.is_dir():
            raise ConfigError(f"workdir {workdir} is not a folder")
        self.shared = _shared or Shared(workdir, Path(home) if home else None, namespace if namespace is not None else {})
        self.superior = _superior
        self.subordinate: Agent | None = None
        self.number = 0 if _superior is None else _superior.number + 1
        self.diagnostics = Diagnostics()
        self.hierarchy = Hierarchy(workdir, profile, home=self.shared.home, diagnostics=self.diagnostics,
                                   entry_points=entry_points)
        self.loader = ModuleLoader(self.diagnostics)
        self.extensions = Extensions(self.hierarchy, self.loader, self.diagnostics)
        self.tools = Tools(self.hierarchy, self.loader, self.diagnostics)
        self.prompts = PromptEngine(prompt_dirs(self.hierarchy.roots), self.diagnostics)
        self.prompts.trust_listings = True
        self._prompt_generation = self.hierarchy.generation
        self._projects = ProjectCache(self.diagnostics, home=self.shared.home) if _accepts_home() else ProjectCache(self.diagnostics)
        self._arguments = {"model": model if isinstance(model, str) else None, "utility_model": utility_model,
                           **(settings or {})}
        self._model_list = None if model is None or isinstance(model, str) else list(model)
        self.history = History()
        self.data: dict[str, Any] = {}
        self.turns: list[Turn] = []
        self._calls: list[CallRecord] = []
        self.last_user_message: Message | None = None
        self.intervention: str | None = None
        self.current_record: CallRecord | None = None
        self.jobs = Jobs()
        self._secrets: tuple[object, Secrets] | None = None
        self._settings: tuple[object, Settings] | None = None
        self._settings_version = 0
        self._part_cache: dict[int, Any] = {}
        self._env_seen: tuple[str | None, ...] = ()
        self._project: Project | None = None
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
        return list(self._calls)

    @property
    def settings(self) -> Settings:
        key = (self.hierarchy.generation, self._settings_version, self.shared.magic_settings.version)
        if self._settings is None or self._settings[0] != key:
            self._settings = (key, self._resolve_settings())
            self.extensions.timeout = self._settings[1].extension_timeout or None
        return self._settings[1]

    def _resolve_settings(self) -> Settings:
        profile_dirs = [p for r, p in self.hierarchy.dirs() if r.kind.endswith("profile")]
        return resolve(self.workdir, profile_dirs, self.diagnostics, magic=self.shared.magic_settings,
                       arguments=self._arguments)

    def configure(self, **values: Any) -> None:
        """Change settings for this agent (the call-argument layer)."""
        self._arguments.update(values)
        self._settings_version += 1
        if "model" in values or "utility_model" in values:
            if "model" in values and self._model_list is not None:
                # the provider is cached by id() of the list, and the next list may reuse a freed list's id
                self.shared.providers.pop(f"list:{id(self._model_list)}", None)
            if "model" in values and not isinstance(values["model"], str) and values["model"] is not None:
                self._model_list, self._arguments["model"] = list(values["model"]), None
            elif "model" in values:
                self._model_list = None
        self.hierarchy.refresh()
        if "model" in values:
            self._warm()

    def _warm(self) -> None:
        """Start the slow imports a first call would pay (the token encoder; litellm for real models)."""
        from a0nb.engine.tokens import load_encoder, warm_in_background
        from a0nb.providers.registry import litellm_model_of
        spec = self.model_spec("chat")
        # a `providers/` class owns a `prefix:`; only a spec with a colon needs them looked up
        model = litellm_model_of(spec, self._custom_providers() if ":" in spec else ())
        if model is not None:
            # one thread, encoder first: the turn needs it sooner, and litellm's import would hold modules
            # (tiktoken among them) that the encoder's load then waits for
            from a0nb.providers.litellm_provider import warm_import_in_background
            if warm_import_in_background(first=load_encoder, model=model):
                return
        warm_in_background()  # (returns at once when the encoder is loaded or loading)

    def set_profile(self, profile: str) -> None:
        from a0nb.files.profiles import agents_dirs, discover_profiles, unknown_profile_message
        available = discover_profiles(agents_dirs(self.hierarchy.roots), self.diagnostics)
        if profile not in available:
            raise ConfigError(unknown_profile_message(profile, available))
        self.hierarchy.set_profile(profile)

    def profiles(self) -> dict[str, Any]:
        from a0nb.files.profiles import agents_dirs, discover_profiles
        return self.hierarchy.memo(("profiles",), lambda: discover_profiles(agents_dirs(self.hierarchy.roots),
                                                                            self.diagnostics))

    def ask(self, message: str, **options: Any) -> Turn:
        """Run one user message to an answer (plain Python, IPython, or inside a running event loop)."""
        return self.shared.bridge.run(lambda: self.ask_async(message, **options), on_interrupt=self.interrupt)

    async def ask_background(self, message: str, **options: Any) -> Turn:
        """Like `ask`, awaited from another running loop (a kernel cell) that stays free meanwhile."""
        return await self.shared.bridge.run_async(lambda: self.ask_async(message, **options),
                                                  on_interrupt=self.interrupt)

    def interrupt(self) -> None:
        """Stop the running turn at its next checkpoint (thread-safe)."""
        event = getattr(self, "_cancel", None)
        if event is not None:
            event.set()
        task = getattr(self, "_task", None)
        loop_ = getattr(self, "_task_loop", None)
        if task is not None and loop_ is not None and not task.done():
            loop_.call_soon_threadsafe(task.cancel)

    async def ask_async(self, message: str, *, attachments: Sequence[Any] = (), history: bool = True) -> Turn:
        turn = Turn(index=len(self.turns) + 1, message=message)
        self.turns.append(turn)
        saved = None
        if not history:
            saved, self.history = self.history, History()
        self._task = asyncio.current_task()
        self._task_loop = asyncio.get_running_loop()
        # Each turn has its own cancel flag (inherited by subordinates and jobs through the context), so a
        # turn that outlived an interrupt can never be revived by the next one.
        self._cancel = threading.Event()
        cancel_token = _CANCEL.set(self._cancel)
        with FOREGROUND:  # background warm-ups (litellm's import) give way while the turn runs
            try:
                self.refresh()
                self._apply_plugin_sources()
                message, turn.expansions = self._expand_completions(message)
                self.hist_add_user_message(message, attachments=attachments)
                turn.text = await self.monologue()
            except (asyncio.CancelledError, TurnInterrupted) as exc:
                turn.interrupted, turn.error = True, "interrupted by the user"
                await loop.handle_interrupt(self, getattr(self, "_streamed", ""))
                raise TurnInterrupted("the turn was interrupted; history is consistent and the next ask works") from exc
            except A0Error as exc:
                turn.error = str(exc)
                exc.turn = turn  # type: ignore[attr-defined]
                raise
            finally:
                _CANCEL.reset(cancel_token)
                self._task = None
                turn.calls = [c for c in self._calls if c.turn == turn.index]
                if saved is not None:
                    self.history = saved
                await self.fire("process_chain_end", data={"turn": turn})
        return turn

    def reset(self) -> None:
        """Forget the conversation: history, agent data, turns and records; scripted models restart."""
        self.history = History()
        self.data.clear()
        self.turns.clear()
        self._calls.clear()
        self.last_user_message = None
        self.shared.providers.clear()
        self.shared.data.pop("loaded_skills", None)
        self.subordinate = None
        self.extensions.call_sync("agent_init", self)

    def register_tool(self, obj: Any, name: str | None = None) -> ToolInfo:
        return self.tools.register(obj, name)

    def register_extension(self, point: str, fn: Any, name: str | None = None) -> Any:
        return self.extensions.register(point, fn, name)

    # Crystal Lattice plugins defined in a notebook cell (AgentCore's registration names)
    def register_provider(self, cls: type, extensions: Sequence[type] = ()) -> Any:
        """A ProviderPlugin class: its `name` becomes a model prefix (`%a0 model echo:echo-1`)."""
        loaded = self._lattice_registry().register_provider(cls, extensions)
        self.shared.providers.clear()
        return loaded

    def register_feature(self, cls: type) -> Any:
        """A FeaturePlugin class, run with every Crystal Lattice provider and offered to completion."""
        loaded = self._lattice_registry().register_feature(cls)
        self.shared.providers.clear()
        return loaded

    def _expand_completions(self, message: str) -> tuple[str, list[dict[str, Any]]]:
        """Completions of feature plugins that were accepted in the message, expanded (`apply_completion`)."""
        from a0nb.files.feature_text import expand_completions
        from a0nb.files.features import features
        return expand_completions(features(self), message)

    def _apply_plugin_sources(self) -> None:
        """Load the setting `plugin_sources` when it changed: each class registered by its kind."""
        sources = self.settings.plugin_sources or []
        key = json.dumps(sources, sort_keys=True, default=str)
        if self.shared.data.get("_plugin_sources_key") == key:
            return
        from a0nb.engine.plugin_kinds import register_found
        from a0nb.files.plugin_sources import load_sources
        from a0nb.resources import user_home
        self.diagnostics.clear("plugin-source")
        cache = Path(self.shared.home or user_home()) / "cache" / "plugin_sources"
        register_found(self, load_sources(sources, self.workdir, cache, self.diagnostics))
        self.shared.data["_plugin_sources_key"] = key

    def _lattice_registry(self) -> Any:
        from a0nb.providers.lattice_discovery import LatticeRegistry
        return self.shared.data.setdefault("_lattice_registry", LatticeRegistry())

    def refresh(self) -> None:
        """Pick up files added or edited next to the notebook (cheap when nothing changed)."""
        self.hierarchy.refresh()
        self._project = None  # re-read (cheaply, from its cache) once per step
        env = tuple(os.environ.get(k) for k in _ENV_KEYS)
        if env != self._env_seen:  # A0NB_* variables are a settings layer: re-resolve when they change
            self._env_seen, self._settings = env, None
        if self._prompt_generation != self.hierarchy.generation:
            self.prompts.set_dirs(prompt_dirs(self.hierarchy.roots))
            self.prompts.invalidate()
            self._prompt_generation = self.hierarchy.generation

    # -- extension points -----------------------------------------------------------------------
    async def fire(self, point: str, **kwargs: Any) -> None:
        await self.extensions.call(point, self, **kwargs)

    def fire_sync(self, point: str, **kwargs: Any) -> None:
        self.extensions.call_sync(point, self, **kwargs)

    @extensible
    async def monologue(self) -> str:
        return await loop.monologue(self)

    def checkpoint(self, ld: loop.LoopData | None = None) -> None:
        event = _CANCEL.get()
        if event is not None and event.is_set():
            raise TurnInterrupted("interrupted")
        if self.intervention is not None and ld is not None:
            self._take_intervention(ld)

    def intervene(self, message: str) -> None:
        """Send a message to a running turn; it is taken at the next checkpoint (Agent Zero's intervention)."""
        self.intervention = message

    def _take_intervention(self, ld: loop.LoopData) -> None:
        text, self.intervention = self.intervention, None
        tool = ld.current_tool
        if tool is not None and tool.progress:
            self.history.add(False, {"tool_name": tool.full_name, "tool_result": tool.progress}, "tool_result")
        if getattr(self, "_streamed", ""):
            self.hist_add_ai_response(self._streamed)
            self._streamed = ""
        self.history.new_topic()
        content = self.parse_prompt("fw.intervention.md", message=text, attachments=[], system_message=[])
        self.hist_add_message(False, _drop_empty(content), "intervention")
        raise loop.Intervention()

    # -- prompts --------------------------------------------------------------------------------
    def render_prompt(self, name: str, /, **kwargs: Any) -> Rendered:
        return self.prompts.render(name, agent=self, **self._prompt_vars(kwargs))

    def read_prompt(self, name: str, /, **kwargs: Any) -> str:
        return self.prompts.render(name, agent=self, **self._prompt_vars(kwargs)).text

    def parse_prompt(self, name: str, /, **kwargs: Any) -> Any:
        return self.prompts.parse(name, agent=self, **self._prompt_vars(kwargs))

    def _prompt_vars(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """`.a0proj/variables.env` values are usable as `{{VAR}}` and in `{{if}}` in every prompt (as upstream);
        a value passed by the caller wins."""
        variables = self.project.variables
        return {**variables, **kwargs} if variables else kwargs

    @extensible
    async def get_system_prompt(self, ld: loop.LoopData) -> list[str]:
        system: list[str] = []
        ld.system_origin = {}
        await self.fire("system_prompt", system_prompt=system, loop_data=ld)
        return system

    async def prepare_prompt(self, ld: loop.LoopData) -> list[dict[str, Any]]:
        self.refresh()
        await self.fire("message_loop_prompts_before", loop_data=ld)
        ld.system = await self.get_system_prompt(ld)
        ld.history_output = self.history.output()
        await self.fire("message_loop_prompts_after", loop_data=ld)
        extras = composition.extras_text(ld)
        extras_message = self.read_prompt("agent.context.extras.md", extras=json.dumps(extras, ensure_ascii=False)) if extras else None
        messages, parts = composition.build(ld, extras_message, extras, self.shared.counter, self._part_cache)
        ld.extras_temporary.clear()
        ld.record = self._new_record("chat", messages, parts, ld.iteration, self.model_spec("chat"))
        return messages

    # -- history ----------------------------------------------------------------------------------
    def hist_add_message(self, ai: bool, content: Any, kind: str = "other", **metadata: Any) -> Message:
        content_data = {"content": content}
        self.fire_sync("hist_add_before", content_data=content_data, ai=ai)
        return self.history.add(ai, content_data["content"], kind, **metadata)  # type: ignore[arg-type]

    def hist_add_user_message(self, text: str, attachments: Sequence[Any] = (), system_message: Sequence[str] = ()) -> Message:
        self.history.new_topic()
        content = self.parse_prompt("fw.user_message.md", message=text, attachments=list(attachments),
                                    system_message=list(system_message))
        msg = self.hist_add_message(False, _drop_empty(content), "user")
        self.last_user_message = msg
        return msg

    def hist_add_ai_response(self, text: str) -> Message:
        return self.hist_add_message(True, self.read_prompt("fw.ai_response.md", message=text), "ai")

    def hist_add_warning(self, message: str) -> Message:
        return self.hist_add_message(False, self.parse_prompt("fw.warning.md", message=message), "warning")

    async def hist_add_tool_result(self, tool_name: str, result: str, **additional: Any) -> Message:
        data = {"tool_name": tool_name, "tool_result": result, **additional}
        self.fire_sync("hist_add_tool_result", data=data)
        content = {"tool_name": data.pop("tool_name", tool_name), "tool_result": data.pop("tool_result", result)}
        return self.hist_add_message(False, content, "tool_result", **data)

    @extensible
    async def handle_exception(self, location: str, exception: BaseException) -> None:
        """A repairable error goes back to the model as a warning; others are raised (Agent Zero's point)."""
        from a0nb.errors import RepairableError
        if not isinstance(exception, RepairableError):
            raise exception
        self.hist_add_warning(await self.format_error(exception))

    async def format_error(self, exc: BaseException) -> str:
        msg = {"message": str(exc)}
        await self.fire("error_format", msg=msg)
        return msg["message"]

    # -- tools ------------------------------------------------------------------------------------
    def get_tool(self, request: ToolRequest, message: str, ld: loop.LoopData) -> Tool:
        try:
            info = self.tools.resolve(request.tool_name)
        except OSError:  # a name the file system refuses (e.g. longer than 255 bytes) names no tool file
            info = None
        unknown = info is None
        if info is None:
            info = self.tools.resolve("unknown")
            if info is None:
                raise ConfigError("the bundled `unknown` tool is missing from tools/ (reinstall a0nb)")
        tool = info.create(self, request.method, dict(request.tool_args), message, ld)
        if unknown:
            tool.name = request.tool_name
        return tool

    def tool_error_text(self, tool_name: str, exc: BaseException) -> str:
        text = f"tool {tool_name} failed with {type(exc).__name__}: {exc}"
        return self.read_prompt("fw.msg_critical_error.md", error_message=self.mask(text))

    def emit_tool_progress(self, tool: Tool, content: str) -> None:
        self.fire_sync("tool_output_update", ctx={"content": content, "tool": tool.full_name})

    # -- project, secrets, clock ------------------------------------------------------------------------
    @property
    def project(self) -> Project:
        if self._project is None:
            self._project = self._projects.get(self.workdir)
        return self._project

    @property
    def secrets(self) -> Secrets:
        project = self.project
        if self._secrets is None or self._secrets[0] is not project:
            self._secrets = (project, Secrets.load(list(project.secrets_files), self.diagnostics))
        return self._secrets[1]

    def skills(self) -> dict[str, Any]:
        """Every valid skill in the hierarchy's `skills/` folders, by name (earlier root wins)."""
        from a0nb.files.skills import SkillIndex
        index = self.shared.data.setdefault("_skill_index", SkillIndex(self.diagnostics))
        return index.get(self.hierarchy.labelled("skills"))

    def loaded_skills(self) -> list[str]:
        """The loaded-skill ledger (names, oldest first), shared by the agent and its subordinates."""
        return self.shared.data.setdefault("loaded_skills", [])

    def mask(self, value: Any) -> Any:
        secrets = self.secrets
        return secrets.mask(value) if secrets else value

    def now(self) -> _dt.datetime:
        frozen = self.settings.frozen_time or os.environ.get("A0NB_FROZEN_TIME")
        if frozen:
            try:
                return _dt.datetime.fromisoformat(frozen)
            except ValueError:
                raise ConfigError(f"frozen_time {frozen!r} is not an ISO date-time like 2026-01-31T09:30:00") from None
        return _dt.datetime.now().replace(microsecond=0)

    async def run_on_main(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run `fn` on the thread that called `ask()` (user code, approval prompts)."""
        return await self.shared.bridge.on_main(fn, *args)

    def subordinate_agent(self, profile: str | None = None, reset: bool = False) -> "Agent":
        if self.subordinate is None or reset or (profile and self.subordinate.profile != profile):
            self.subordinate = Agent(self.workdir, profile=profile or self.profile, settings=dict(self._arguments),
                                     _superior=self, _shared=self.shared)
            self.subordinate._model_list = self._model_list
        return self.subordinate

    def __repr__(self) -> str:
        return f"Agent(workdir={str(self.workdir)!r}, profile={self.profile!r}, model={self.model_spec('chat')!r})"


_CANCEL: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("a0nb_cancel", default=None)
_ENV_KEYS = tuple(f"A0NB_{n.upper()}" for n in Settings.__dataclass_fields__)


def _accepts_home() -> bool:
    import inspect
    return "home" in inspect.signature(ProjectCache).parameters


def _drop_empty(content: Any) -> Any:
    if isinstance(content, dict):
        return {k: v for k, v in content.items() if v not in ("", [], None, {})}
    return content

