"""Import redirection for the Python files a0nb loads (tools, extensions, variables loaders): Agent Zero's
module names (`helpers.*`, `python.helpers.*`, `agent`, `initialize`, `models`) resolve to `a0nb.compat`,
and upstream module paths (`extensions.python.<point>.<file>`, `tools.<name>`, `plugins.<name>.…`,
`usr.plugins.<name>.…`) to files in the search hierarchy (then to a0nb's own equivalents).

The redirection is per module: each loaded file gets its own `__builtins__` whose `__import__` knows the
names, so nothing is registered in `sys.modules` under Agent Zero's names and a user's own `helpers` or
`agent` module next to the notebook keeps working everywhere else (`import a0nb.compat` opts in to
the names process-wide)."""
from __future__ import annotations

import builtins
import importlib
import types
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

COMPAT = "a0nb.compat"
# Agent Zero's top-level module names and the a0nb modules that answer them (implemented in a0nb.compat)
ALIASES = {"helpers": f"{COMPAT}.helpers", "agent": f"{COMPAT}.agent", "initialize": f"{COMPAT}.initialize",
           "models": f"{COMPAT}.models"}
# upstream module paths that name files of the search hierarchy; a0nb's own equivalents sit under SIBLINGS
FOLDER_TOPS = ("extensions", "tools", "plugins", "usr")
SIBLINGS = f"{COMPAT}.siblings"

Loader = Callable[[Path, str], "types.ModuleType | None"]


def alias_target(name: str) -> str | None:
    """The a0nb module answering an Agent Zero module name, or None (`python.helpers.x` is the older layout)."""
    if name == "python.helpers" or name.startswith("python.helpers."):
        name = name[len("python."):]
    top, dot, rest = name.partition(".")
    target = ALIASES.get(top)
    return None if target is None else target + dot + rest


class FolderPackage(types.ModuleType):
    """A package standing for an upstream folder path; its children resolve on attribute access."""

    def __init__(self, name: str, resolve: Callable[[str], Any]) -> None:
        super().__init__(name)
        self.__path__: list[str] = []
        self._resolve = resolve

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        found = self._resolve(f"{self.__name__}.{attr}")
        if found is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r} (no file "
                                 f"{self.__name__.replace('.', '/')}/{attr}.py in the search hierarchy)")
        return found


class Redirector:
    """The `__import__` of one loaded file: Agent Zero names first, then the ordinary import."""

    def __init__(self, roots: Callable[[], Sequence[Any]] | None = None, load: Loader | None = None) -> None:
        self.roots = roots
        self.load = load
        self._builtins: dict[str, Any] | None = None

    def builtins(self) -> dict[str, Any]:
        if self._builtins is None:
            table = dict(vars(builtins))
            table["__import__"] = self.import_
            self._builtins = table
        return self._builtins

    def import_(self, name: str, globals: Any = None, locals: Any = None, fromlist: Sequence[str] | None = (),
                level: int = 0) -> Any:
        if level == 0 and name:
            found = self._agent_zero(name, tuple(fromlist or ()))
            if found is not None:
                return found
        return builtins.__import__(name, globals, locals, fromlist or (), level)

    def _agent_zero(self, name: str, fromlist: tuple[str, ...]) -> Any:
        target = alias_target(name)
        if target is not None:
            return _import_alias(name, target, fromlist)
        top = name.partition(".")[0]
        if top == "python" and name.split(".")[1:2] in (["tools"], ["extensions"]):
            top, name = name.split(".")[1], name[len("python."):]  # the older layout: python/tools, python/extensions
        if top in FOLDER_TOPS and self.load is not None:
            module = self.resolve(name)
            if module is None:
                return None
            return module if fromlist else self.resolve(top)
        return None

    # -- upstream module paths -----------------------------------------------------------------
    def resolve(self, name: str) -> Any:
        """A hierarchy file, else a0nb's equivalent, else a folder package (None: nothing has that name)."""
        sibling = _sibling(name)
        # with an equivalent of upstream's own, a0nb's bundled files (a0nb's signatures) are not upstream's
        candidates = list(self._candidates(name.split("."), skip_bundled=sibling is not None))
        for path in candidates:
            file = path.with_suffix(".py")
            if file.is_file() and self.load is not None:
                module = self.load(file, name)
                if module is not None:
                    return module
        if sibling is not None and not hasattr(sibling, "__path__"):
            return sibling
        if sibling is not None or any(p.is_dir() for p in candidates):
            return FolderPackage(name, self.resolve)
        return None

    def _candidates(self, parts: list[str], skip_bundled: bool = False) -> Iterable[Path]:
        roots = list(self.roots()) if self.roots is not None else []
        if skip_bundled:
            roots = [r for r in roots if not str(getattr(r, "kind", "")).startswith("bundled")]
        top, rest = parts[0], parts[1:]
        if top in ("usr",):
            if rest[:1] != ["plugins"]:
                return
            top, rest = "plugins", rest[1:]
        if top == "plugins":
            if not rest:
                return
            for folder in _plugin_folders(roots, rest[0]):
                yield folder.joinpath(*rest[1:]) if rest[1:] else folder
            return
        for root in roots:
            base = Path(getattr(root, "path", root))
            if top == "extensions":
                tail = rest[1:] if rest[:1] == ["python"] else rest
                yield base.joinpath("extensions", *tail) if tail else base / "extensions"
                yield base.joinpath("extensions", "python", *tail) if tail else base / "extensions" / "python"
            else:
                yield base.joinpath(top, *rest)


def _plugin_folders(roots: Sequence[Any], plugin: str) -> Iterable[Path]:
    seen: set[Path] = set()
    for root in roots:
        path = Path(getattr(root, "path", root))
        if getattr(root, "kind", "") == "plugin" and getattr(root, "plugin", None) == plugin:
            candidates = [path]
        else:
            candidates = [path / "plugins" / plugin]
        for c in candidates:
            if c not in seen and c.is_dir():
                seen.add(c)
                yield c


def _sibling(name: str) -> Any:
    parts = name.split(".")
    if parts[0] == "usr":
        parts = parts[1:]
    if parts[0] == "extensions" and parts[1:2] != ["python"]:
        parts = ["extensions", "python", *parts[1:]]
    try:
        return importlib.import_module(".".join([SIBLINGS, *parts]))
    except ModuleNotFoundError as exc:
        if exc.name and not (SIBLINGS + ".").startswith(exc.name + ".") and not exc.name.startswith(SIBLINGS):
            raise  # a missing dependency of an equivalent is a bug, not an absent name
        return None


def _import_alias(name: str, target: str, fromlist: tuple[str, ...]) -> Any:
    try:
        module = importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name and (exc.name == target or target.startswith(exc.name + ".")):
            return None  # a name a0nb does not answer: the ordinary import (a user's own module) decides
        raise
    for item in fromlist:
        if item != "*" and not hasattr(module, item):
            try:
                importlib.import_module(f"{target}.{item}")
            except ModuleNotFoundError:
                return None
    if fromlist:
        return module
    top = name.partition(".")[0]
    return importlib.import_module(ALIASES[top] if name.startswith(top) and top in ALIASES else f"{COMPAT}.python")


def plain_redirector() -> Redirector:
    """Agent Zero's module names only (variables loaders: they have no hierarchy of their own)."""
    return Redirector()
