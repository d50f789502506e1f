"""Extensions: discovery across the hierarchy (both folder spellings), same-file-name override,
run order by file name, Python-registered extensions, `@extensible` implicit points, and time limits."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar, cast

from a0nb.diagnostics import Diagnostics
from a0nb.errors import A0Error, ExtensionError, RepairableError
from a0nb.files.hierarchy import Hierarchy
from a0nb.files.loader import ModuleLoader, module_name_for, subclasses_in
from a0nb.files.points import POINTS, is_known

F = TypeVar("F", bound=Callable[..., Any])
REGISTERED = "registered in the notebook"
# A user's sync extension runs in a worker thread (so a hang can be cut off at `timeout`) until it has been
# quick QUICK_RUNS times in a row; then it runs inline, timed, and goes back to a worker after a slow run.
# Bundled and async extensions always run inline (async ones are limited by asyncio.wait_for).
QUICK_RUNS = 3
QUICK_SECONDS = 0.05
_TRUSTED = 1 << 30


class Extension:
    """Base class for extension files: one subclass per file; `execute(**kwargs)` may be async."""

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


@dataclass
class FireStats:
    """Counts per point, and an optional trace of point names (for tests and the closing note)."""

    counts: dict[str, int] = field(default_factory=dict)
    trace: list[str] | None = None


class Extensions:
    """The extension registry of one agent."""

    def __init__(self, hierarchy: Hierarchy, loader: ModuleLoader, diagnostics: Diagnostics,
                 *, timeout: float | None = 60.0) -> None:
        self.hierarchy = hierarchy
        self.loader = loader
        loader.use_roots(lambda: hierarchy.roots)
        self.diagnostics = diagnostics
        self.timeout = timeout
        self.registered: dict[str, dict[str, ExtensionInfo]] = {}
        self.stats = FireStats()
        self._validated_generation = -1
        self._quick: dict[Any, int] = {}  # factory -> quick runs in a row (_TRUSTED: always inline)

    # -- resolution -------------------------------------------------------------------------
    def resolve(self, point: str) -> list[ExtensionInfo]:
        found = self.hierarchy.memo(("extensions", point), lambda: self._resolve_files(point))
        extra = self.registered.get(point)
        if not extra:
            return found
        merged = {e.name: e for e in found}
        merged.update(extra)  # a cell registration beats a file of the same name
        return sorted(merged.values(), key=lambda e: e.name)

    def _resolve_files(self, point: str) -> list[ExtensionInfo]:
        self.validate()
        copies: dict[str, list[tuple[Any, Path]]] = {}
        for root, folder in self.hierarchy.extension_dirs(point):
            for path in sorted(folder.glob("*.py")):
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
            if not is_known(point):
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
        name = name or getattr(fn, "__name__", "extension")
        info = ExtensionInfo(point, name, cast(Callable[..., Any], fn), None, REGISTERED, is_class=is_class)
        self.registered.setdefault(point, {})[name] = info
        return info

    def unregister(self, point: str, name: str) -> None:
        self.registered.get(point, {}).pop(name, None)

    # -- calling ----------------------------------------------------------------------------
    def _count(self, point: str) -> None:
        self.stats.counts[point] = self.stats.counts.get(point, 0) + 1
        if self.stats.trace is not None:
            self.stats.trace.append(point)

    async def call(self, point: str, agent: Any, **kwargs: Any) -> None:
        self._count(point)
        for info in self.resolve(point):
            before = _snapshot(kwargs)
            try:
                result = self._run(info, point, agent, kwargs)
                if inspect.isawaitable(result):
                    if self.timeout and not info.root_label.startswith("bundled"):
                        await asyncio.wait_for(_as_coro(result), self.timeout)
                    else:  # bundled hooks are part of the loop: no watchdog task per call
                        await result
            except asyncio.TimeoutError as exc:
                raise self._overdue(info, point, "was stopped") from exc
            except (A0Error, RepairableError, asyncio.CancelledError, KeyboardInterrupt):
                raise
            except (Exception, SystemExit) as exc:  # sys.exit() in an extension must not end the agent's loop
                raise _wrap(info, point, exc) from exc
            _attribute(info, kwargs, before)

    def call_sync(self, point: str, agent: Any, **kwargs: Any) -> None:
        self._count(point)
        for info in self.resolve(point):
            before = _snapshot(kwargs)
            try:
                result = self._run(info, point, agent, kwargs)
            except (A0Error, RepairableError, KeyboardInterrupt):
                raise
            except (Exception, SystemExit) as exc:
                raise _wrap(info, point, exc) from exc
            if inspect.iscoroutine(result) and _no_running_loop():
                # an async extension at a sync point outside any event loop (an agent built in plain
                # Python, as Agent Zero's agent_init examples are written) runs to its end here
                try:
                    asyncio.run(result)
                except (A0Error, RepairableError, KeyboardInterrupt):
                    raise
                except (Exception, SystemExit) as exc:
                    raise _wrap(info, point, exc) from exc
                _attribute(info, kwargs, before)
                continue
            if inspect.isawaitable(result):
                if inspect.iscoroutine(result):
                    result.close()
                raise ExtensionError(f"extension {info.label} is async but point {point} is synchronous; "
                                     "make its execute() a plain def")
            _attribute(info, kwargs, before)

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
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        context = contextvars.copy_context()

        def work() -> None:
            try:
                done.set_result(context.run(_invoke, info, agent, kwargs))
            except BaseException as exc:  # handed to the caller, which decides what it means
                done.set_exception(exc)

        # a daemon thread, not a pool: a hung extension must not block interpreter exit or later calls
        threading.Thread(target=work, name=f"a0nb-extension-{info.name}", daemon=True).start()
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


def _no_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False


def _trusted(info: ExtensionInfo) -> bool:
    """Bundled extensions are part of a0nb; async ones are limited by asyncio.wait_for without a thread."""
    if info.root_label.startswith("bundled"):
        return True
    fn = getattr(info.factory, "execute", None) if info.is_class else info.factory
    return inspect.iscoroutinefunction(fn)


def _invoke(info: ExtensionInfo, agent: Any, kwargs: dict[str, Any]) -> Any:
    if info.is_class:
        return info.factory(agent=agent).execute(**kwargs)
    return _call_subset(info.factory, agent, kwargs)


@functools.lru_cache(maxsize=512)
def _accepted(fn: Callable[..., Any]) -> tuple[bool, frozenset[str]]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True, frozenset()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return True, frozenset()
    return False, frozenset(p.name for p in params)


def _call_subset(fn: Callable[..., Any], agent: Any, kwargs: dict[str, Any]) -> Any:
    """Registered functions may take any subset of the point's kwargs (and `agent`)."""
    takes_all, names = _accepted(fn)
    if takes_all:
        return fn(agent=agent, **kwargs)
    args = {k: v for k, v in kwargs.items() if k in names}
    if "agent" in names:
        args["agent"] = agent
    return fn(**args)


async def _as_coro(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _wrap(info: ExtensionInfo, point: str, exc: BaseException) -> ExtensionError:
    where = str(info.path) if info.path else f"{info.name} ({REGISTERED})"
    return ExtensionError(f"extension {where} failed at point {point}: {type(exc).__name__}: {exc}")


def _snapshot(kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    ld = kwargs.get("loop_data")
    system = kwargs.get("system_prompt")
    if ld is None and system is None:
        return None
    temp = {k: id(v) for k, v in ld.extras_temporary.items()} if ld is not None else {}
    pers = {k: id(v) for k, v in ld.extras_persistent.items()} if ld is not None else {}
    return temp, pers, len(system) if isinstance(system, list) else None


def _attribute(info: ExtensionInfo, kwargs: dict[str, Any], before: tuple[Any, ...] | None) -> None:
    """Remember which extension set each extras key and appended each system section."""
    if before is None:
        return
    temp, pers, n_system = before
    ld = kwargs.get("loop_data")
    if ld is not None:
        for store, old, kind in ((ld.extras_temporary, temp, "temporary"), (ld.extras_persistent, pers, "persistent")):
            for key, value in store.items():
                if old.get(key) != id(value):
                    ld.extras_origin[key] = (info, kind)
    system = kwargs.get("system_prompt")
    if n_system is not None and isinstance(system, list) and ld is not None:
        for i in range(n_system, len(system)):
            ld.system_origin[i] = info


def _closest(point: str) -> str:
    import difflib
    match = difflib.get_close_matches(point, list(POINTS), n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""


# -- @extensible -------------------------------------------------------------------------------
_UNSET: Any = object()


# a0nb modules whose extensible functions keep Agent Zero's point names (`_functions/agent/Agent/monologue/...`)
UPSTREAM_MODULE_NAMES = {"a0nb.engine.agent": "agent"}


def function_point(fn: Callable[..., Any]) -> str:
    module = fn.__module__ or "__main__"
    module = UPSTREAM_MODULE_NAMES.get(module, module)
    qual = fn.__qualname__.replace(".<locals>", "")
    return "_functions/" + "/".join(module.split(".")) + "/" + "/".join(qual.split("."))


def _find_registry(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Extensions | None]:
    candidate = kwargs.get("agent")
    if isinstance(getattr(candidate, "extensions", None), Extensions):
        return candidate, candidate.extensions
    for a in args:
        reg = getattr(a, "extensions", None)
        if isinstance(reg, Extensions):
            return a, reg
    return None, None


def _normalise(data: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args = data["args"] if isinstance(data["args"], tuple) else (data["args"],)
    kwargs = data["kwargs"] if isinstance(data["kwargs"], dict) else {}
    return args, kwargs


def extensible(fn: F) -> F:
    """Give `fn` the implicit points `_functions/<module>/<qualname>/start|end`.

    Start extensions may replace `data["args"]`/`data["kwargs"]`, set `data["result"]` (the call is
    skipped) or `data["exception"]` (raised at once); end extensions may replace the result or
    replace/clear the exception."""
    base = function_point(fn)
    start, end = base + "/start", base + "/end"

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            agent, reg = _find_registry(args, kwargs)
            if reg is None or not (reg.resolve(start) or reg.resolve(end)):
                return await fn(*args, **kwargs)
            data = {"args": args, "kwargs": kwargs, "result": _UNSET, "exception": None}
            await reg.call(start, agent, data=data)
            if data["exception"] is not None:
                raise data["exception"]
            if data["result"] is _UNSET:
                a, k = _normalise(data)
                try:
                    data["result"] = await fn(*a, **k)
                except Exception as exc:  # handed to end extensions, which may clear it
                    data["exception"] = exc
            await reg.call(end, agent, data=data)
            if data["exception"] is not None:
                raise data["exception"]
            return None if data["result"] is _UNSET else data["result"]
        async_wrapper.__a0_point__ = base  # type: ignore[attr-defined]
        return cast(F, async_wrapper)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        agent, reg = _find_registry(args, kwargs)
        if reg is None or not (reg.resolve(start) or reg.resolve(end)):
            return fn(*args, **kwargs)
        data = {"args": args, "kwargs": kwargs, "result": _UNSET, "exception": None}
        reg.call_sync(start, agent, data=data)
        if data["exception"] is not None:
            raise data["exception"]
        if data["result"] is _UNSET:
            a, k = _normalise(data)
            try:
                data["result"] = fn(*a, **k)
            except Exception as exc:
                data["exception"] = exc
        reg.call_sync(end, agent, data=data)
        if data["exception"] is not None:
            raise data["exception"]
        return None if data["result"] is _UNSET else data["result"]
    wrapper.__a0_point__ = base  # type: ignore[attr-defined]
    return cast(F, wrapper)
