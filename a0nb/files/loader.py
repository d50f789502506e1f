"""Import user Python files (tools, extensions, variables loaders, providers) as fresh modules,
cached by (path, mtime, size), with failures turned into diagnostics instead of crashes."""
from __future__ import annotations

import importlib.util
import inspect
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from a0nb.diagnostics import Diagnostics
from a0nb.folder_trust import is_trusted
from a0nb.files.imports import Redirector
from a0nb.files.import_aliases import AliasFinder, AliasScope


# sys.modules and the import hooks a load installs are process-wide: agents on several threads (Agent.map)
# load their files one at a time (re-entrant: a file being loaded may load another)
_IMPORTING = threading.RLock()


@dataclass(frozen=True)
class _Key:
    path: str
    mtime_ns: int
    size: int


def file_key(path: Path) -> _Key | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return _Key(str(path), st.st_mtime_ns, st.st_size)


class ModuleLoader:
    """Loads `.py` files once per version; a changed file is imported again on next use."""

    def __init__(self, diagnostics: Diagnostics, roots: Any = None) -> None:
        self.diagnostics = diagnostics
        self._cache: dict[str, tuple[_Key, ModuleType | None]] = {}
        # Agent Zero's module names inside loaded files (a0nb.files.imports); `roots` (a callable giving the
        # search hierarchy) lets `extensions.python.…`, `tools.…` and `plugins.…` name its files
        self.redirector = Redirector(roots, self._load_upstream)
        self.aliases = AliasFinder()  # `agent_core.*` for Crystal Lattice plugins, only while a file loads

    def use_roots(self, roots: Any) -> None:
        """Give upstream module paths a hierarchy to resolve in (the first registry that knows one sets it)."""
        if self.redirector.roots is None:
            self.redirector.roots = roots

    def _load_upstream(self, path: Path, dotted: str) -> ModuleType | None:
        return self.load(path, dotted, "python module")

    def load(self, path: Path, module_name: str, area: str) -> ModuleType | None:
        key = file_key(path)
        if key is None:
            return None
        hit = self._cache.get(key.path)
        if hit is not None and hit[0] == key:
            return hit[1]
        if not is_trusted(path):  # folder trust: listed once by the hierarchy (files/trust_scan.py), never run
            return None
        module = self._import(path, module_name, area)
        self._cache[key.path] = (key, module)
        return module

    def _import(self, path: Path, module_name: str, area: str) -> ModuleType | None:
        with _IMPORTING:
            return self._import_locked(path, module_name, area)

    def _import_locked(self, path: Path, module_name: str, area: str) -> ModuleType | None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            self.diagnostics.add("error", area, "cannot be imported as a Python module", path)
            return None
        module = importlib.util.module_from_spec(spec)
        module.__dict__["__builtins__"] = self.redirector.builtins()
        # Registered only while executing, so dataclasses and typing can resolve the module.
        previous = sys.modules.get(module_name)
        sys.modules[module_name] = module
        try:
            with AliasScope(self.aliases):
                spec.loader.exec_module(module)
        except BaseException as exc:  # a user file may raise anything, SystemExit included
            if isinstance(exc, KeyboardInterrupt):
                raise
            line = _error_line(exc, path)
            tb = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self.diagnostics.add(
                "error", area, f"failed to import: {tb}", path, line,
                fix="fix the error in this file; the other files still load",
            )
            return None
        finally:
            if previous is None:
                sys.modules.pop(module_name, None)
            else:
                sys.modules[module_name] = previous
        return module


def _error_line(exc: BaseException, path: Path) -> int | None:
    if isinstance(exc, SyntaxError) and exc.lineno:
        return exc.lineno
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if Path(frame.filename) == path:
            return frame.lineno
    return None


def subclasses_in(module: ModuleType, base: type) -> list[type]:
    """Subclasses of `base` defined in (not merely imported into) `module`, sorted by name."""
    found = [
        obj for _, obj in inspect.getmembers(module, inspect.isclass)
        if issubclass(obj, base) and obj is not base and obj.__module__ == module.__name__
    ]
    return sorted(found, key=lambda c: c.__name__)


def module_name_for(root_path: Path, path: Path, prefix: str = "a0nb_user") -> str:
    """A stable dotted name from a file's place under its root (used by @extensible point names)."""
    try:
        rel = path.with_suffix("").relative_to(root_path)
        parts = [p.replace("-", "_").replace(".", "_") for p in rel.parts]
    except ValueError:
        parts = [path.stem]
    return ".".join(parts) if parts else prefix


def describe(obj: Any) -> str:
    return getattr(obj, "__qualname__", None) or type(obj).__name__
