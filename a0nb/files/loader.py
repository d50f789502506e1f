"""Import user Python files (tools, extensions, variables loaders, providers) as fresh modules,
cached by (path, mtime, size), with failures turned into diagnostics instead of crashes. The installation's
own files are imported once per process and shared by every agent (`installed`)."""
from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import sys
import threading
import traceback
import weakref
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from a0nb.diagnostics import Diagnostics
from a0nb.errors import error_line
from a0nb.folder_trust import BUNDLED_PARTS, is_trusted
from a0nb.files.imports import Redirector, plain_redirector
from a0nb.resources import bundled_root, litellm_import_defaults
from a0nb.files.import_aliases import AliasFinder, AliasScope
from a0nb.files.source_import import installed_spec, source_spec


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


@functools.lru_cache(maxsize=4)  # where a0nb is installed does not change while it runs
def _installed_dirs(bundled: Path) -> tuple[str, ...]:
    return tuple(os.path.join(bundled, part, "") for part in BUNDLED_PARTS)


def installed(path: str) -> bool:
    """Whether `path`, as the hierarchy found it (under the bundled root), is one of a0nb's own files
    (extensions, tools, providers, plugins, profiles). A link to one from another folder is not."""
    return path.startswith(_installed_dirs(bundled_root()))


class InstalledModules:
    """The modules of the installation's own files, shared by every loader of the process (a new agent, a
    subordinate, each item of a batch), as upstream's folder -> classes cache is: a process-wide cache, not
    state (one version of a file under one module name gives one module; an edited file is imported again).
    Such a file imports only a0nb's modules, so its `__builtins__` are the plain redirection of Agent Zero's
    names, tied to no agent's hierarchy; a file that fails to import is not kept (each loader reports it)."""

    def __init__(self) -> None:
        self._modules: dict[tuple[str, str], tuple[_Key, ModuleType]] = {}
        self.redirector = plain_redirector()
        # a shared module -> base class -> its subclasses defined there (`subclasses_in`: a scan of the module
        # per load, and every new agent loads each file); weak, so a replaced version's entry goes with it
        self.classes: weakref.WeakKeyDictionary[ModuleType, dict[type, list[type]]] = weakref.WeakKeyDictionary()

    def get(self, key: _Key, module_name: str) -> ModuleType | None:
        hit = self._modules.get((key.path, module_name))
        return hit[1] if hit is not None and hit[0] == key else None

    def put(self, key: _Key, module_name: str, module: ModuleType) -> None:
        self._modules[(key.path, module_name)] = (key, module)
        self.classes[module] = {}


INSTALLED = InstalledModules()


class ModuleLoader:
    """Loads `.py` files once per version; a changed file is imported again on next use."""

    def __init__(self, diagnostics: Diagnostics, roots: Any = None, shared: InstalledModules | None = INSTALLED) -> None:
        self.diagnostics = diagnostics
        self._cache: dict[str, tuple[_Key, ModuleType | None]] = {}
        self.shared = shared  # None: the installation's files too are imported afresh by this loader
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
        if self.shared is not None and installed(key.path):
            module = self._installed(path, key, module_name, area, self.shared)
        else:
            module = self._import(path, module_name, area)
        self._cache[key.path] = (key, module)
        return module

    def _installed(self, path: Path, key: _Key, module_name: str, area: str, shared: InstalledModules) -> ModuleType | None:
        with _IMPORTING:  # (one import of a file when several agents of a batch load it at once)
            module = shared.get(key, module_name)
            if module is None:
                module = self._import_locked(path, module_name, area, shared.redirector, from_source=False)
                if module is not None:
                    shared.put(key, module_name, module)
            return module

    def _import(self, path: Path, module_name: str, area: str) -> ModuleType | None:
        with _IMPORTING:
            return self._import_locked(path, module_name, area, self.redirector)

    def _import_locked(self, path: Path, module_name: str, area: str, redirector: Redirector,
                       from_source: bool = True) -> ModuleType | None:
        """`from_source`: a user's file, compiled from its text (source_import); the installation's own files
        (False) read Python's bytecode cache, written when a0nb was installed, and write none."""
        spec = (source_spec if from_source else installed_spec)(module_name, path)
        if spec is None or spec.loader is None:
            self.diagnostics.add("error", area, "cannot be imported as a Python module", path)
            return None
        module = importlib.util.module_from_spec(spec)
        module.__dict__["__builtins__"] = redirector.builtins()
        # Registered only while executing, so dataclasses and typing can resolve the module.
        previous = sys.modules.get(module_name)
        sys.modules[module_name] = module
        litellm_import_defaults()  # (the file may import litellm, which would go to the network and print)
        try:
            with AliasScope(self.aliases):
                spec.loader.exec_module(module)
        except BaseException as exc:  # a user file may raise anything, SystemExit included
            if isinstance(exc, KeyboardInterrupt):
                raise
            line = error_line(exc, path)
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


def subclasses_in(module: ModuleType, base: type) -> list[type]:
    """Subclasses of `base` defined in (not merely imported into) `module`, sorted by name (found once per
    module of the installation: INSTALLED.classes)."""
    known = INSTALLED.classes.get(module)
    if known is not None and base in known:
        return list(known[base])
    found = sorted((obj for _, obj in inspect.getmembers(module, inspect.isclass)
                    if issubclass(obj, base) and obj is not base and obj.__module__ == module.__name__),
                   key=lambda c: c.__name__)
    if known is not None:
        known[base] = list(found)
    return found


# A process-wide cache of a pure function of two paths (every new agent names each file it loads)
@functools.lru_cache(maxsize=4096)
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
