"""Foreign import names (Crystal Lattice's `agent_core.*`) served by a0nb modules, for the files a0nb loads:
a meta-path finder placed last, so a real package of that name or a user's own module still wins."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Mapping, Sequence

# top-level foreign name -> the a0nb package that provides it (imported only when a loaded file asks)
ALIASES: Mapping[str, str] = {"agent_core": "a0nb.compat.agent_core"}


class AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `agent_core` and `agent_core.x` as the a0nb modules named in `aliases`."""

    def __init__(self, aliases: Mapping[str, str] = ALIASES) -> None:
        self.aliases = dict(aliases)
        self.served: list[str] = []  # the alias names this finder put into sys.modules (AliasScope takes them out)

    def target(self, fullname: str) -> str | None:
        top, _, rest = fullname.partition(".")
        base = self.aliases.get(top)
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        real = self.target(fullname)
        if real is None or importlib.util.find_spec(real) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        # importlib returns whatever sys.modules holds after exec: the a0nb module itself, not a copy
        real = importlib.import_module(self.target(module.__name__) or "")
        sys.modules[module.__name__] = real
        self.served.append(module.__name__)


class AliasScope:
    """Active while a0nb imports one user file: the finder is on `sys.meta_path` (last) and the alias names
    it put into `sys.modules` are removed again afterwards, so a notebook cell's own imports are untouched.
    (The finder lists the names it served: no scan of `sys.modules`, which every file's load paid twice.)"""

    def __init__(self, finder: AliasFinder) -> None:
        self.finder = finder
        self._added = False
        self._mark = 0

    def __enter__(self) -> "AliasScope":
        self._mark = len(self.finder.served)  # (scopes nest: a file being loaded may load another)
        if self.finder not in sys.meta_path:
            sys.meta_path.append(self.finder)
            self._added = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._added:
            try:
                sys.meta_path.remove(self.finder)
            except ValueError:
                pass
            self._added = False
        served = self.finder.served
        for name in served[self._mark:]:
            target = self.finder.target(name)
            if target is not None and name in sys.modules and sys.modules[name] is sys.modules.get(target):
                del sys.modules[name]
        del served[self._mark:]


__all__ = ["ALIASES", "AliasFinder", "AliasScope"]
