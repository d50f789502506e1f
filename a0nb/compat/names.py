"""The process-wide finder for Agent Zero's module names: the same module objects as a0nb.compat's,
registered under both names; placed last on sys.meta_path so it never shadows a real module."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any, Sequence

from a0nb.ext import agent_zero_alias


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        return None  # the a0nb module already ran


class AgentZeroNames(importlib.abc.MetaPathFinder):
    """Answers `helpers.x` with `a0nb.compat.helpers.x` (and `agent`, `initialize`, `models`, `python.helpers`).

    The last finder answers top-level names nobody else has; the first (`submodules=True`) answers only
    children of a package that is already an alias, which the path finder would otherwise load a second
    time from a0nb's folder under the alias name."""

    def __init__(self, submodules: bool = False) -> None:
        self.submodules = submodules

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if self.submodules:
            parent = sys.modules.get(fullname.rpartition(".")[0]) if "." in fullname else None
            if parent is None or getattr(parent, "__name__", "") == fullname.rpartition(".")[0]:
                return None  # not below an alias (a user's own package, or a top-level name)
        name = "a0nb.compat.python" if fullname == "python" else agent_zero_alias(fullname)
        if name is None:
            return None
        try:
            found = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            return None
        if found is None:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(name), is_package=found.submodule_search_locations is not None)
        if found.submodule_search_locations is not None:
            spec.submodule_search_locations = list(found.submodule_search_locations)
        return spec


def install() -> None:
    """Idempotent: one finder, at the end of sys.meta_path."""
    if not any(isinstance(f, AgentZeroNames) for f in sys.meta_path):
        sys.meta_path.insert(0, AgentZeroNames(submodules=True))
        sys.meta_path.append(AgentZeroNames())
