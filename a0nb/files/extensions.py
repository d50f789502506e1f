"""Extensions: discovery across the hierarchy (both folder spellings), same-file-name override,
run order by file name, Python-registered extensions, `@extensible` implicit points, and time limits."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, cast

from a0nb.diagnostics import Diagnostics
from a0nb.errors import A0Error, ExtensionError, RepairableError
from a0nb.files.ext_calls import REGISTERED, Registrations, call_subset, wrap
from a0nb.files.ext_chain import BARE, CLASS, FUNCTION, TIMED, fire_point, fire_point_sync, run_chain, run_chain_sync
from a0nb.files.extensible import PointRegistry, extensible, function_point
from a0nb.files.hierarchy import Hierarchy, py_files
from a0nb.files.loader import ModuleLoader, module_name_for, subclasses_in
from a0nb.files.points import POINTS, UPSTREAM_ONLY, is_known
from a0nb.folder_trust import is_trusted

__all__ = [
    "Extension", "ExtensionInfo", "Extensions", "FireStats", "PointRegistry", "REGISTERED", "extensible", "fire_point",
    "fire_point_sync", "function_point",
]

# A user's sync extension runs in a worker thread (so a hang can be cut off at `timeout`) until it has been
# quick QUICK_RUNS times in a row; then it runs inline, timed, and goes back to a worker after a slow run.
# Bundled and async extensions always run inline (async ones are limited by asyncio.wait_for).
QUICK_RUNS = 3
QUICK_SECONDS = 0.05
_TRUSTED = 1 << 30


class Extension:
    """Base class for extension files: one subclass per file; `execute(**kwargs)` may be async.

    At `system_prompt`, a subclass may also define `section_inputs(agent)` (a static method): a tuple of
    everything its sections depend on besides prompt files and their variables loaders, compared with ==,
    or None to be called anyway. While every extension at the point returns inputs equal to the last fire's,
    the point's sections are reused without calling them (engine/section_memo.py)."""

    def __init__(self, agent: Any = None, **kwargs: Any) -> None:
        self.agent = agent
        self.kwargs = kwargs

    def execute(self, **kwargs: Any) -> Any:
        return None


@dataclass(frozen=True)
class ExtensionInfo:
    """One resolved extension: where it came from and which lower copies it overrode."""

    point: str
    name: str
    factory: Callable[..., Any]
    path: Path | None
    root_label: str
    overrode: tuple[Path, ...] = ()
    is_class: bool = True

    @property
    def label(self) -> str:
        return f"{self.name} ({self.root_label}{': ' + str(self.path) if self.path else ''})"


# A point's chain bound for calling: (info, how it is called (ext_chain.CLASS/FUNCTION/TIMED), awaited under
# the time limit)
Bound = tuple[tuple[ExtensionInfo, int, bool], ...]


@dataclass
class FireStats:
    """Counts per point, and an optional trace of point names (for tests and the closing note)."""

    counts: dict[str, int] = field(default_factory=dict)
    trace: list[str] | None = None


class Extensions(PointRegistry):
    """The extension registry of one agent."""

    def __init__(self, hierarchy: Hierarchy, loader: ModuleLoader, diagnostics: Diagnostics,
                 *, timeout: float | None = 60.0) -> None:
        self.hierarchy = hierarchy
        self.loader = loader
        loader.use_roots(lambda: hierarchy.roots)
        self.diagnostics = diagnostics
        self.timeout = timeout
        self.stats = FireStats()
        self._validated_generation = -1
        self._quick: dict[Any, int] = {}  # factory -> quick runs in a row (_TRUSTED: always inline)
        # Resolved chains, valid for one hierarchy generation and one state of `registered` (any change to
        # either empties them, through the hierarchy's change listener): point -> files' chain; point -> files +
        # registrations; point -> the chain bound for calling (read straight by ext_chain.fire_point);
        # `_functions/...` base -> has a start or end extension
        self._generation = hierarchy.generation
        self._files: dict[str, list[ExtensionInfo]] = {}
        self._chains: dict[str, list[ExtensionInfo]] = {}
        self.bound: dict[str, Bound] = {}
        self._hooked: dict[str, bool] = {}
        self.version = 0  # bumped whenever a chain may have changed (a hot loop that skips quiet points checks it)
        self.hooks = self._hooked  # read straight by @extensible: emptied at once by a hierarchy rebuild
        hierarchy.on_change(self._forget_files)
        self.registered: dict[str, dict[str, ExtensionInfo]] = Registrations(self._forget_chains)

    # -- resolution -------------------------------------------------------------------------
    def resolve(self, point: str) -> list[ExtensionInfo]:
        """The extensions at `point` in run order (cached until the hierarchy or a registration changes)."""
        if self._generation != self.hierarchy.generation:
            self._forget_files()
        chain = self._chains.get(point)
        if chain is None:
            found = self._files.get(point)
            if found is None:
                found = self._files[point] = self._resolve_files(point)
            extra = self.registered.get(point)
            if extra:
                merged = {e.name: e for e in found}
                merged.update(extra)  # a cell registration beats a file of the same name
                found = sorted(merged.values(), key=lambda e: e.name)
            chain = self._chains[point] = found
        return chain

    def hooked(self, base: str) -> bool:
        if self._generation == self.hierarchy.generation:
            hit = self._hooked.get(base)
            if hit is not None:
                return hit
        hooked = self._hooked[base] = bool(self.resolve(base + "/start") or self.resolve(base + "/end"))
        return hooked

    def bind(self, point: str) -> Bound:
        """The chain at `point` bound for calling (kept in `bound` until the next change)."""
        bound = self.bound[point] = tuple((info, _how(info), not info.root_label.startswith("bundled"))
                                          for info in self.resolve(point))
        return bound

    def _forget_files(self) -> None:
        self._generation = self.hierarchy.generation
        self._files.clear()
        self._forget_chains()

    def _forget_chains(self) -> None:
        self.version += 1
        self._chains.clear()
        self.bound.clear()
        self._hooked.clear()

    def _resolve_files(self, point: str) -> list[ExtensionInfo]:
        self.validate()
        copies: dict[str, list[tuple[Any, Path]]] = {}
        for root, folder in self.hierarchy.extension_dirs(point):
            for path in py_files(folder):
                copies.setdefault(path.stem, []).append((root, path))
        infos = []
        for name in sorted(copies):
            info = self._first_loadable(point, name, copies[name])
            if info is not None:
                infos.append(info)
        return infos

    def _first_loadable(self, point: str, name: str, copies: list[tuple[Any, Path]]) -> ExtensionInfo | None:
        """The highest copy that loads; a broken override never removes the copy below it (ARCHITECTURE §8)."""
        broken: list[Path] = []
        for i, (root, path) in enumerate(copies):
            cls = self._load_class(root.path, path)
            if cls is None:
                if is_trusted(path):  # (an untrusted copy did not fail: it was never run, and the trust warning lists it)
                    broken.append(path)
                continue
            if broken:
                self.diagnostics.add("warning", "extension", f"override(s) {', '.join(map(str, broken))} failed to "
                                     f"load; this lower copy stays active at {point}", path,
                                     fix="fix the override (its own error is reported above)")
            return ExtensionInfo(point, name, cls, path, root.label, tuple(p for _, p in copies[i + 1:]))
        return None

    def _load_class(self, root_path: Path, path: Path) -> type[Extension] | None:
        module = self.loader.load(path, module_name_for(root_path, path), "extension")
        if module is None:
            return None
        classes = subclasses_in(module, Extension)
        if not classes:
            self.diagnostics.add("error", "extension", "defines no Extension subclass; the file is ignored", path,
                                 fix="define `class MyExtension(Extension)` with an `execute(self, **kwargs)` method")
            return None
        if len(classes) > 1:
            names = ", ".join(c.__name__ for c in classes)
            self.diagnostics.add("warning", "extension",
                                 f"defines several Extension subclasses ({names}); only {classes[-1].__name__} runs",
                                 path, fix="keep one Extension subclass per file")
        return classes[-1]

    def validate(self) -> None:
        """Report folders named after no known extension point (once per hierarchy generation)."""
        if self._validated_generation == self.hierarchy.generation:
            return
        self._validated_generation = self.hierarchy.generation
        self.diagnostics.clear("extension-point")
        for _root, folder, point in self.hierarchy.point_folders():
            if point in UPSTREAM_ONLY:
                self.diagnostics.add("info", "extension-point", f"the extensions here never run: {point!r} is "
                                     f"{UPSTREAM_ONLY[point]}", folder,
                                     fix="nothing to fix; remove the folder to drop this note")
            elif not is_known(point):
                close = _closest(point)
                self.diagnostics.add("warning", "extension-point", f"folder is named after no known extension point {point!r}",
                                     folder, fix=f"rename it to a point listed by `%a0 extensions`{close}")

    def register(self, point: str, fn: Callable[..., Any] | type, name: str | None = None) -> ExtensionInfo:
        """Register a function or Extension subclass from Python (a notebook cell)."""
        if not is_known(point):
            raise A0Error(f"unknown extension point {point!r}{_closest(point)}; see a0nb.files.points.POINTS")
        is_class = isinstance(fn, type)
        if is_class and not issubclass(cast(type, fn), Extension):
            raise A0Error(f"{fn!r} is a class but not an Extension subclass")
        key = name or str(getattr(fn, "__name__", "extension"))
        info = ExtensionInfo(point, key, cast(Callable[..., Any], fn), None, REGISTERED, is_class=is_class)
        self.registered.setdefault(point, {})[key] = info
        return info

    def unregister(self, point: str, name: str) -> None:
        self.registered.get(point, {}).pop(name, None)

    # -- calling (ext_chain.py runs the chain) -----------------------------------------------------
    def _fired(self, point: str) -> Bound:
        """Count a fire of `point`; its bound chain (a dict lookup while nothing changed)."""
        counts = self.stats.counts
        counts[point] = counts.get(point, 0) + 1
        if self.stats.trace is not None:
            self.stats.trace.append(point)
        chain = self.bound.get(point)
        return self.bind(point) if chain is None else chain

    def skipped(self, point: str, times: int) -> None:
        """Count `times` fires of `point` that a hot loop left out because nothing listened (checked with
        `resolve`, and `version` unchanged since): the counts and trace read as if they had happened."""
        counts = self.stats.counts
        counts[point] = counts.get(point, 0) + times
        if self.stats.trace is not None:
            self.stats.trace.extend([point] * times)

    async def call(self, point: str, agent: Any, **kwargs: Any) -> None:
        chain = self._fired(point)
        if chain:
            await run_chain(self, chain, point, agent, kwargs)

    def call_sync(self, point: str, agent: Any, **kwargs: Any) -> None:
        chain = self._fired(point)
        if chain:
            run_chain_sync(self, chain, point, agent, kwargs)

    def _settle_sync(self, info: ExtensionInfo, point: str, result: Any) -> None:
        """What a sync point does with an extension's non-None result: runs a coroutine to its end at `agent_init`
        (Agent Zero's own example there is an `async def execute`) or where no event loop runs, refuses an
        awaitable at a synchronous point of the loop (`hist_add_before`, ...: a mistake, as upstream says), ignores
        anything else."""
        if inspect.iscoroutine(result) and (point in _BUILD_POINTS or _no_running_loop()):
            try:
                _run_to_end(result)
            except (A0Error, RepairableError, KeyboardInterrupt):
                raise
            except (Exception, SystemExit) as exc:
                raise wrap(info, point, exc) from exc
            return
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            raise ExtensionError(f"extension {info.label} is async but point {point} is synchronous; "
                                 "make its execute() a plain def")

    # -- time limits -------------------------------------------------------------------------
    def _run(self, info: ExtensionInfo, point: str, agent: Any, kwargs: dict[str, Any]) -> Any:
        """Call one extension: inline when trusted or known quick (timed), else in a worker thread."""
        quick = self._quick.get(info.factory)
        if quick is None:
            quick = self._quick[info.factory] = _TRUSTED if _trusted(info) else 0
        if quick >= _TRUSTED or not self.timeout:
            return _invoke(info, agent, kwargs)
        started = time.perf_counter()
        result = _invoke(info, agent, kwargs) if quick >= QUICK_RUNS else self._in_worker(info, point, agent, kwargs)
        elapsed = time.perf_counter() - started
        if quick < QUICK_RUNS or elapsed > QUICK_SECONDS:
            self._timed(info, point, elapsed)
        return result

    def _timed(self, info: ExtensionInfo, point: str, elapsed: float) -> None:
        if elapsed <= QUICK_SECONDS:
            self._quick[info.factory] = self._quick.get(info.factory, 0) + 1
            return
        self._quick[info.factory] = 0  # slow once: back to a worker thread, where a hang can be cut off
        if self.timeout and elapsed > self.timeout:
            self.diagnostics.add("warning", "extension", f"took {elapsed:.1f} s at {point} (limit {self.timeout:g} s)",
                                 info.path if info.path else info.label)

    def _in_worker(self, info: ExtensionInfo, point: str, agent: Any, kwargs: dict[str, Any]) -> Any:
        done = _on_thread(f"a0nb-extension-{info.name}", _invoke, info, agent, kwargs)
        try:
            return done.result(self.timeout)
        except concurrent.futures.TimeoutError:
            self._quick[info.factory] = 0
            raise self._overdue(info, point, "was abandoned (its thread cannot be killed and runs on in the "
                                "background; the turn no longer waits for it)") from None

    def _overdue(self, info: ExtensionInfo, point: str, what: str) -> ExtensionError:
        where = str(info.path) if info.path else info.label
        self.diagnostics.add("error", "extension", f"took longer than {self.timeout:g} s at point {point} and {what}",
                             where, fix="make it faster, or raise the setting extension_timeout / A0NB_EXTENSION_TIMEOUT")
        return ExtensionError(
            f"extension {info.label} at point {point} took longer than {self.timeout:g} s and {what} "
            "(raise the setting extension_timeout / A0NB_EXTENSION_TIMEOUT to allow more; 0 means no limit)")


_BUILD_POINTS = frozenset({"agent_init"})  # fired while an agent is built, outside its loop


def _no_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False


def _run_to_end(coro: Any) -> None:
    """Run a coroutine to its end from synchronous code: here when no event loop runs in this thread (an agent
    built in plain Python), else on a loop of its own in a helper thread, this thread waiting (an agent built in
    a notebook cell, where the kernel's loop runs, or by a tool on the agent's loop), with this thread's
    context variables."""
    if _no_running_loop():
        asyncio.run(coro)
    else:
        _on_thread("a0nb-sync-point", asyncio.run, coro).result()


def _on_thread(name: str, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
    """`fn(*args)` on a new daemon thread with the caller's context variables; its result or exception in the
    future. A daemon thread, not a pool: a hung extension must not block interpreter exit or later calls."""
    done: concurrent.futures.Future[Any] = concurrent.futures.Future()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            done.set_result(context.run(fn, *args))
        except BaseException as exc:  # handed to the caller, which decides what it means
            done.set_exception(exc)

    threading.Thread(target=work, name=name, daemon=True).start()
    return done


def _invoke(info: ExtensionInfo, agent: Any, kwargs: dict[str, Any]) -> Any:
    """One call of a timed extension (tests/compat/call_watch.py recognises a user file's calls by this frame)."""
    if info.is_class:
        return info.factory(agent=agent).execute(**kwargs)
    return call_subset(info.factory, agent, kwargs)


def _how(info: ExtensionInfo) -> int:
    """Called straight from the chain's loop: bundled extensions and async functions registered from Python
    (user files, even trusted ones, go through Extensions._run and its `_invoke`: TIMED)."""
    if info.root_label.startswith("bundled") or (info.path is None and _trusted(info)):
        if not info.is_class:
            return FUNCTION
        plain = getattr(info.factory, "__init__", None) is Extension.__init__
        return BARE if plain and getattr(info.factory, "__new__", None) is object.__new__ else CLASS
    return TIMED


def _trusted(info: ExtensionInfo) -> bool:
    """Bundled extensions are part of a0nb; async ones are limited by asyncio.wait_for without a thread."""
    if info.root_label.startswith("bundled"):
        return True
    fn = getattr(info.factory, "execute", None) if info.is_class else info.factory
    return inspect.iscoroutinefunction(fn)


def _closest(point: str) -> str:
    import difflib
    match = difflib.get_close_matches(point, list(POINTS), n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""
