"""Prompt variables: `VariablesPlugin` loaders (`name.py` beside `name.md`), imported and cached by
file stamp, and how a variable's value becomes prompt text."""
from __future__ import annotations

import importlib.util
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from a0nb.diagnostics import Diagnostics
from a0nb.folder_trust import is_trusted
from a0nb.files.imports import plain_redirector
from a0nb.files.prompt_lookup import RACY_NS
from a0nb.files.source_import import source_spec
from a0nb.resources import litellm_import_defaults

__all__ = ["VariablesPlugin", "VariablesLoaders", "as_text", "py_name"]


class VariablesPlugin:
    """Subclass in `name.py` beside `name.md` to supply that prompt's variables (explicit kwargs win).
    `files_only = True` says get_variables returns the same while the agent's files are unchanged (it reads
    only the hierarchy): an agent then runs it again only after a file changed, not on every render."""

    files_only = False

    def get_variables(self, file: str, backup_dirs: list[str] | None = None, **kwargs: Any) -> dict[str, Any]:
        return {}


def as_text(value: Any) -> str:
    """A variable's value as prompt text: strings as they are, dicts and lists as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        try:
            return json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):  # non-string keys, cycles
            return str(value)
    return str(value)


def py_name(name: str) -> str:
    """The loader file for a prompt file: `a/b.md` -> `a/b.py`."""
    stem, ext = os.path.splitext(name)
    return (stem if ext else name) + ".py"


def _is_plugin(obj: Any) -> bool:
    if not isinstance(obj, type) or obj is VariablesPlugin:
        return False
    # a reloaded a0nb.files.prompt_vars makes a new base class; files written against the old one still count
    return issubclass(obj, VariablesPlugin) or any(
        b.__name__ == "VariablesPlugin" and b.__module__.startswith("a0nb") for b in obj.__mro__[1:])


class VariablesLoaders:
    """Runs variables loaders; each file's class is imported once per (mtime, size) and reused."""

    def __init__(self, diagnostics: Diagnostics) -> None:
        self.diagnostics = diagnostics
        self._classes: dict[Path, tuple[tuple[int, int] | None, type | None, str]] = {}
        self._module_ids = itertools.count()
        # The owner watches the loader files and folder trust and calls invalidate() on a change: a class
        # checked once (trusted, stat'ed, imported cleanly) is then reused without either.
        self.trust = False
        self._checked: dict[Path, type] = {}

    def invalidate(self) -> None:
        self._checked.clear()

    def files_only(self, path: Path) -> bool:
        """The loader at `path` (checked since the owner's last invalidate) declares `files_only`."""
        cls = self._checked.get(path)
        return cls is not None and getattr(cls, "files_only", False) is True

    def variables(self, path: Path, md_path: Path, dirs: list[str], agent: object, kwargs: dict[str, Any],
                  name: str) -> dict[str, Any]:
        """The loader's variables for `md_path` ({} and an error diagnostic when the loader fails)."""
        cls = self._plugin_class(path)
        if cls is None:
            return {}
        extra = {k: v for k, v in kwargs.items() if k not in ("file", "backup_dirs", "_agent")}
        try:
            got = cls().get_variables(str(md_path), dirs, _agent=agent, **extra)
            if not isinstance(got, dict):
                raise TypeError(f"get_variables returned {type(got).__name__}, not a dict")
        except (Exception, SystemExit) as exc:  # sys.exit() in a loader must not end the agent's event loop
            self.diagnostics.add("error", "prompt", f"{cls.__name__}.get_variables failed: {type(exc).__name__}: "
                                 f"{exc}; {name} rendered without its variables", path, fix="fix the loader")
            return {}
        return dict(got)

    def _plugin_class(self, path: Path) -> type | None:
        checked = self._checked.get(path)
        if checked is not None:
            return checked
        if not is_trusted(path):  # folder trust: listed once by the hierarchy (files/trust_scan.py), never run
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (st.st_mtime_ns, st.st_size)
        hit = self._classes.get(path)
        if hit is None or hit[0] != key:
            started = time.time_ns()
            cls, error = self._import(path)
            hit = (key if started - key[0] > RACY_NS else None, cls, error)
            self._classes[path] = hit
        if hit[2]:
            self.diagnostics.add("error", "prompt", hit[2], path, fix="fix the file; the prompt renders without it")
        elif self.trust and hit[0] is not None and hit[1] is not None:
            self._checked[path] = hit[1]
        return hit[1]

    def _import(self, path: Path) -> tuple[type | None, str]:
        module_name = f"_a0nb_prompt_vars_{id(self):x}_{next(self._module_ids)}"
        try:
            spec = source_spec(module_name, path)  # (never a stale or planted bytecode cache)
            if spec is None or spec.loader is None:
                return None, "cannot be imported as a Python file"
            module = importlib.util.module_from_spec(spec)
            module.__dict__["__builtins__"] = plain_redirector().builtins()  # Agent Zero's `helpers.*` names
            sys.modules[module_name] = module  # dataclasses and typing look the module up while it runs
            litellm_import_defaults()
            try:
                spec.loader.exec_module(module)
            finally:
                sys.modules.pop(module_name, None)
        except (Exception, SystemExit) as exc:
            return None, f"variables loader failed to import: {type(exc).__name__}: {exc}"
        classes = [v for v in vars(module).values() if _is_plugin(v)]
        own = [c for c in classes if c.__module__ == module_name]
        if not (own or classes):
            return None, "defines no VariablesPlugin subclass"
        return (own or classes)[0], ""
