"""User files run from their source text: never from a bytecode cache, and none written beside them.

Python's own file loader reads `__pycache__/<name>.cpython-XY.pyc` when its header matches the source, and a
header matches by the source's mtime in whole seconds and its size, or not at all for an "unchecked-hash"
file (PEP 552). So an edit saved within the second the previous version was written, at the same size (a
digit changed), ran the old code; and a folder could carry a `.pyc` that runs instead of the `.py` its user
read before trusting it. Writing the cache also changed the mtime of the user's folders, which the
hierarchy's change check took for an edit. The installation's own files read the bytecode cache written when
a0nb was installed (pip compiles a wheel's files; `make install` compiles a checkout's) but never write one
(`installed_spec`): the hierarchy watches their folders too, and a cache written there mid-session, in a
checkout, read as an edit of the installation and dropped every cache keyed on the folders.

A plugin folder's packages (the setting `plugin_sources`) import their own modules with Python's import
statement; `source_root` makes every folder under such a root load the same way (a path hook that claims
only those folders; compiled extension modules still load, bytecode files never do)."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import threading
from types import CodeType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Buffer  # (collections.abc.Buffer from Python 3.12)

__all__ = ["CacheReadingLoader", "SourceOnlyLoader", "installed_spec", "source_root", "source_spec"]


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """A source-file loader whose code is compiled from the file's text on every import."""

    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)  # type: ignore[no-any-return]


class CacheReadingLoader(importlib.machinery.SourceFileLoader):
    """Python's source-file loader, reading a valid bytecode cache as it does, writing none."""

    def set_data(self, path: str, data: Buffer, *, _mode: int = 0o666) -> None:
        """(SourceLoader's one way of writing: the bytecode cache)"""


def installed_spec(module_name: str, path: str | os.PathLike[str]) -> importlib.machinery.ModuleSpec | None:
    """The spec of one of the installation's own files, loaded by CacheReadingLoader."""
    name = os.fspath(path)
    return importlib.util.spec_from_file_location(module_name, name, loader=CacheReadingLoader(module_name, name))


def source_spec(module_name: str, path: str | os.PathLike[str]) -> importlib.machinery.ModuleSpec | None:
    """The spec `importlib.util.spec_from_file_location` gives for `path`, loaded by SourceOnlyLoader."""
    name = os.fspath(path)
    return importlib.util.spec_from_file_location(module_name, name, loader=SourceOnlyLoader(module_name, name))


_LOADERS = ((importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
            (SourceOnlyLoader, importlib.machinery.SOURCE_SUFFIXES))
_ROOTS: set[str] = set()  # folders whose modules (and their packages' modules) load from source only
_LOCK = threading.Lock()


def _under_root(path: str) -> bool:
    return any(path == root or path.startswith(root + os.sep) for root in _ROOTS)


def _hook(path: str) -> importlib.machinery.FileFinder:
    if not _under_root(path):
        raise ImportError("not a plugin folder of a0nb's")  # (the next hook, Python's own, takes it)
    return importlib.machinery.FileFinder(path, *_LOADERS)


def source_root(folder: str | os.PathLike[str]) -> None:
    """From now on, modules that Python's path finder finds in `folder` or below (a package's own imports too)
    load from source. Process-wide, as the import system it extends."""
    root = os.path.abspath(os.fspath(folder))
    with _LOCK:
        if _hook not in sys.path_hooks:
            sys.path_hooks.insert(0, _hook)
        if root not in _ROOTS:
            _ROOTS.add(root)
            for path in [p for p in list(sys.path_importer_cache) if isinstance(p, str) and _under_root(p)]:
                sys.path_importer_cache.pop(path, None)  # (a finder Python's hook made for it before)
