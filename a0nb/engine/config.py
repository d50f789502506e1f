"""An agent's configuration: settings (the call-argument layer over `%config`, `A0NB_*`, project and
profile layers, re-resolved only on change), its project and secrets, profiles, the clock, the warm-up."""
from __future__ import annotations

import datetime as _dt
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from a0nb.diagnostics import Diagnostics
from a0nb.engine.shared import VersionedDict
from a0nb.engine.tokens import load_encoder, warm_in_background
from a0nb.errors import ConfigError
from a0nb.files.file_events import Quiet, containing_folders, quiet_for
from a0nb.files.hierarchy import Hierarchy
from a0nb.files.profiles import agents_dirs, discover_profiles, unknown_profile_message
from a0nb.files.prompt_lookup import racy_ns
from a0nb.files.projects import META, Project, ProjectCache, secrets_identities
from a0nb.files.credentials import credential_values, dotenv_values
from a0nb.files.secrets import Secrets, parse_dotenv
from a0nb.providers.registry import litellm_model_of
from a0nb.resources import environ_generation, user_home
from a0nb.settings import Settings, resolve

_ENV_KEYS = tuple(f"A0NB_{n.upper()}" for n in Settings.__dataclass_fields__)


class AgentSettings:
    """Resolved settings, kept until something they come from changes: a hierarchy rebuild (its listener), the
    argument layer (`update`), `%config` (its version, compared at each read), the `A0NB_*` environment
    (`watch_environment`)."""

    def __init__(self, hierarchy: Hierarchy, diagnostics: Diagnostics, magic: VersionedDict,
                 arguments: dict[str, Any], on_resolve: Callable[[Settings], None] | None = None) -> None:
        self.hierarchy, self.diagnostics, self.magic = hierarchy, diagnostics, magic
        self.arguments = arguments  # the call-argument layer (Agent(..., settings=...), agent.configure)
        self.on_resolve = on_resolve  # told each newly resolved Settings
        # the resolved settings and the `%config` version they saw (None: resolve at the next read); read straight
        # by Agent.settings, so that a read while nothing changed is one call
        self.current: Settings | None = None
        self.magic_seen = -1
        self._env_seen: tuple[str | None, ...] = ()
        self._env_generation = -1
        self._frozen_env: tuple[int, str | None] = (-1, None)
        self._clock = (-1, -1, _dt.datetime.min)  # (a whole second, the environment generation, its local time)
        hierarchy.on_change(self.forget)

    def get(self) -> Settings:
        current = self.current
        if current is not None and self.magic_seen == self.magic.version:
            return current
        magic_seen = self.magic.version  # (taken first: a change while resolving is seen at the next read)
        profile_dirs = [p for r, p in self.hierarchy.dirs() if r.kind.endswith("profile")]
        settings = resolve(self.hierarchy.workdir, profile_dirs, self.diagnostics, magic=self.magic,
                           arguments=self.arguments, home=self.hierarchy.home)
        self.current, self.magic_seen = settings, magic_seen
        if self.on_resolve is not None:
            self.on_resolve(settings)
        return settings

    def forget(self) -> None:
        """Resolve again at the next read."""
        self.current = None

    def update(self, values: dict[str, Any]) -> None:
        self.arguments.update(values)
        self.current = None

    def watch_environment(self) -> None:
        """A0NB_* variables are a settings layer: re-resolve when they change (called once per step)."""
        generation = environ_generation()
        if generation == self._env_generation:  # nothing in the environment changed
            return
        env = tuple(os.environ.get(k) for k in _ENV_KEYS)
        self._env_generation = generation
        if env != self._env_seen:
            self._env_seen, self.current = env, None

    def now(self) -> _dt.datetime:
        frozen = self.get().frozen_time
        if not frozen:  # A0NB_FROZEN_TIME set since the settings were last resolved: read when the environment changed
            generation = environ_generation()
            if generation != self._frozen_env[0]:
                self._frozen_env = (generation, os.environ.get("A0NB_FROZEN_TIME"))
            frozen = self._frozen_env[1]
        if frozen:
            try:
                return _dt.datetime.fromisoformat(frozen)
            except ValueError:
                raise ConfigError(f"frozen_time {frozen!r} is not an ISO date-time like 2026-01-31T09:30:00") from None
        # datetime.now().replace(microsecond=0), made once a second (steps come many to a second): the whole
        # second of the same clock, kept with the environment's generation (a new TZ is a new local time)
        second, clock = time.time_ns() // 1_000_000_000, self._clock
        if clock[0] != second or clock[1] != self._frozen_env[0]:
            clock = self._clock = (second, self._frozen_env[0], _dt.datetime.fromtimestamp(second))
        return clock[2]


class ProjectState:
    """The notebook folder's project (`.a0proj/`), re-read cheaply once per step, and its secrets.

    The secret set of a step (`now`): taken at its first use after the step began (`invalidate`) and kept
    while the step runs, so a step stats `.env` and both `secrets.env` once, not at every masking. A tool can
    change any source, so while its code runs nothing is kept (`unpin`: its progress output is masked against
    the files as they are) and after it the set is taken afresh (`pin`). The Agent uses it only while a turn
    runs and only on the thread that runs the step (`here.step is now`: `here` is thread-local); any other
    caller (a tool's thread, one a timeout left behind, the kernel's main thread) looks at the sources, as
    every caller does outside a turn."""

    def __init__(self, diagnostics: Diagnostics, home: Path | None) -> None:
        self.diagnostics = diagnostics
        self._home = Path(home).expanduser() if home is not None else None
        self._projects = ProjectCache(diagnostics, home=home)
        self.current: Project | None = None  # this step's project (None: read it again at its next use)
        self._files: tuple[Any, ...] = ()  # (workdir, project, environment, the names of .env and both secrets.env)
        self._secrets: tuple[tuple[Any, ...], Secrets] | None = None
        self._masked: Secrets | None = None
        self._masked_for: tuple[Any, ...] = ()
        self._environ: tuple[tuple[Any, ...], tuple[tuple[str, str], ...]] | None = None
        self._dotenv_cache: tuple[tuple[Any, ...], tuple[tuple[str, str], ...]] | None = None
        self.now: Secrets | None = None  # the running step's secret set (None: look at the sources)
        self.here = _StepSet()  # `here.step`: the same, seen only by the thread that runs the step
        self._pin = False  # whether `secrets()` keeps what it finds (on the thread `_owner`)
        self._owner = 0
        self._checked: Any = None  # the step's project check, whose stats of both secrets.env a step's set may use
        # the notebook folder's mtime when its .env was found missing after the folder's last change (outside the
        # clock's reach): while the step's project check finds the folder with that mtime, .env is still missing
        self._no_dotenv_in: int | None = None
        self._dotenv_missing = False
        self._absent: set[str] = set()  # the secret files found missing at their last look (see _identities)
        # (the sources' names it was taken for, a Quiet taken before the last look at them): see file_events
        self._quiet: tuple[tuple[Any, ...], Quiet] | None = None

    def invalidate(self) -> None:
        """A step begins: the project and the secret set are looked at afresh at their next use."""
        self.current, self.now, self._pin, self._owner = None, None, True, threading.get_ident()
        self._checked = None

    def pin(self) -> None:
        """A tool's code has run: the secret set is looked at afresh at its next use, then kept for the step
        (a no-op while it is kept: nothing ran since it was taken)."""
        if not self._pin:
            self.now, self._pin, self._owner = None, True, threading.get_ident()
        self._checked = None

    def unpin(self) -> None:
        """A tool's code is about to run: every use looks at the sources until `pin`."""
        self.now, self._pin, self._checked = None, False, None

    def project(self, workdir: Path) -> Project:
        if self.current is None:
            self.current = self._projects.get(workdir)
            self._checked = self._projects.checked
        return self.current

    def secrets(self, workdir: Path, key_envs: Iterable[str | None] = (), step: bool = False) -> Secrets:
        """`secrets.env` values (`$A0NB_HOME`'s, then the project's), plus every credential in the environment
        and the folder's `.env` (masked only). Every source is checked on every call, cheaply
        (`environ_generation`: one dict comparison; a stat per file, or none while no file event came from
        their folders since the last look: file_events), and read again only when it changed; in a
        turn the Agent calls this once a step and once after each tool (see the class). A step's first look
        (`step`, on the thread that runs it, no tool run since) takes both secrets.env as the step's project
        check stat'ed them: one stat, of `.env`, not three."""
        env = environ_generation()  # taken before anything is read: a change during the read is seen next time
        project, seen = self.current or self.project(workdir), self._files  # (the step's project: no call)
        if not seen or seen[0] is not workdir or seen[1] is not project or seen[2] != env:
            seen = self._files = (workdir, project, env, self._names(workdir, project), os.fspath(workdir))
        names = seen[3]
        wanted = key_envs if key_envs.__class__ is tuple else tuple(key_envs)
        checked, self._checked = self._checked, None
        me = threading.get_ident()
        quiet, self._quiet = self._quiet, None
        masked_for = self._masked_for
        if quiet is not None and masked_for and masked_for[0] == env and masked_for[1] == wanted \
                and quiet[0] is seen and quiet[1].quiet() and self._masked is not None:
            self._quiet = quiet  # no file event in their folders since the sources were last looked at
            if self._pin and self._owner == me:
                self.now = self.here.step = self._masked
            return self._masked
        if checked is not None and step and self._pin and self._owner == me:
            home_name, home_id, meta_name, meta_id = secrets_identities(checked)
            # (stats taken earlier in the step, before any Quiet now could be: none is kept from this look)
            quiet = None
            ids = (self._dotenv_identity(names[0], seen[4], checked), home_id, meta_id) \
                if (home_name, meta_name) == names[1:] else _identities(names, self._absent)
        else:
            quiet = (seen, q) if (q := quiet_for(containing_folders(names))) is not None else None  # (before the stats)
            ids = _identities(names, self._absent)
        dotenv, files = ids[0], ids[1:]
        key = (env, wanted, dotenv, files)
        self._quiet = quiet
        if key == self._masked_for and self._masked is not None:
            if self._pin and self._owner == me:
                self.now = self.here.step = self._masked
            return self._masked
        if self._secrets is None or self._secrets[0] != files:
            paths = [Path(name) for name, there in zip(names[1:], files) if there]
            self._secrets = (files, Secrets.load(paths, self.diagnostics))
            self._masked = None
        found = self._environment((env, wanted)) + self._dotenv(workdir, dotenv)
        if self._masked is None or self._masked.credentials != found:
            self._masked = self._secrets[1].with_credentials(found)
        self._masked_for = key
        if self._pin and self._owner == me:
            self.now = self.here.step = self._masked
        return self._masked

    def _dotenv_identity(self, name: str, folder: str, checked: tuple[Any, ...]) -> tuple[int, ...]:
        """`_identity(name)` of the notebook's `.env`, or () without a stat while the step's project check (`checked`)
        found the folder with the mtime it had when `.env` was last found missing, long after the folder's last
        change: nothing was added to it since."""
        mtime = checked[3] if checked[2] == folder else None
        if mtime is not None and mtime == self._no_dotenv_in:
            return ()
        now = time.time_ns() if self._dotenv_missing and mtime is not None else 0  # (before the stat)
        found = _identity(name, self._absent)
        self._dotenv_missing = not found
        self._no_dotenv_in = mtime if mtime is not None and not found and now > mtime + racy_ns(mtime) else None
        return found

    def _names(self, workdir: Path, project: Project) -> tuple[str, str, str]:
        """`.env` and the `secrets.env` files (later wins), as names for `os.stat`."""
        home = self._home or user_home()
        return str(workdir / ".env"), str(home / "secrets.env"), str(project.folder / META / "secrets.env")

    def _environment(self, key: tuple[Any, ...]) -> tuple[tuple[str, str], ...]:
        if self._environ is None or self._environ[0] != key:
            self._environ = (key, tuple(credential_values(names=key[1])))
        return self._environ[1]

    def _dotenv(self, workdir: Path, seen: tuple[int, ...]) -> tuple[tuple[str, str], ...]:
        if not seen:
            return ()
        if self._dotenv_cache is None or self._dotenv_cache[0] != (workdir, seen):
            pairs = dotenv_values(workdir, lambda text: [(e.key, e.value) for e in parse_dotenv(text)[0]])
            self._dotenv_cache = ((workdir, seen), tuple(pairs))
        return self._dotenv_cache[1]


def _identity(name: str, absent: set[str]) -> tuple[int, ...]:
    """What changes when the file is written (in place or replaced), () when there is none. `absent`: the
    names found missing at their last look (see _identities), kept up to date."""
    if name in absent and not os.access(name, os.F_OK):
        return ()
    try:
        st = os.stat(name)
    except OSError:
        _absent(absent, name)
        return ()
    if name in absent:
        absent.discard(name)
    return st.st_ino, st.st_mtime_ns, st.st_size


def _absent(absent: set[str], name: str) -> None:
    if len(absent) >= 64:  # (names of folders the agent no longer looks at)
        absent.clear()
    absent.add(name)


class _StepSet(threading.local):
    step: Secrets | None = None


def _identities(names: tuple[str, str, str], absent: set[str]) -> tuple[tuple[int, ...], ...]:
    """`_identity` of each: a file missing at its last look (`absent`, usually both secrets.env) is looked
    for with access(), which neither builds a stat result nor raises (under half a failing stat's CPU), and
    stat'ed only when it is there; the others are stat'ed, as every one was before."""
    return _identity(names[0], absent), _identity(names[1], absent), _identity(names[2], absent)


def warm_up(spec: str, custom_providers: Callable[[], Iterable[str]]) -> None:
    """Start the slow imports a first call would pay (the token encoder; litellm for real models)."""
    # a `providers/` class owns a `prefix:`; only a spec with a colon needs them looked up
    model = litellm_model_of(spec, custom_providers() if ":" in spec else ())
    if model is not None:
        # one thread, encoder first: the turn needs it sooner, and litellm's import would hold modules
        # (tiktoken among them) that the encoder's load then waits for
        from a0nb.providers.litellm_provider import warm_import_in_background  # litellm's module: lazily
        if warm_import_in_background(first=load_encoder, model=model):
            return
    warm_in_background()  # (returns at once when the encoder is loaded or loading)


def profiles(hierarchy: Hierarchy, diagnostics: Diagnostics) -> dict[str, Any]:
    """The profiles the hierarchy's `agents/` folders define, memoized until a file changes."""
    return hierarchy.memo(("profiles",), lambda: discover_profiles(agents_dirs(hierarchy.roots), diagnostics))


def set_profile(hierarchy: Hierarchy, diagnostics: Diagnostics, profile: str) -> None:
    available = discover_profiles(agents_dirs(hierarchy.roots), diagnostics)
    if profile not in available:
        raise ConfigError(unknown_profile_message(profile, available))
    hierarchy.set_profile(profile)
