"""Where the bundled defaults live: `a0nb/_bundled/` in a wheel, the repository root in a checkout."""
from __future__ import annotations

import functools
import itertools
import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=None)  # how a0nb was installed does not change while it runs
def bundled_root() -> Path:
    """The folder holding the bundled `prompts/ agents/ plugins/ tools/ extensions/ skills/ kernel/`."""
    inside = PACKAGE_DIR / "_bundled"
    return inside if inside.is_dir() else PACKAGE_DIR.parent


def distributions_only_on_sys_path() -> bool:
    """Are installed distributions found only in sys.path's folders (so a folder's mtime tells when they changed)?
    Yes while every finder of distributions on sys.meta_path is the standard PathFinder or the backport
    importlib_metadata's MetadataPathFinder (which that package puts on sys.meta_path when imported, and which
    reads the same folders); a custom finder may find them anywhere."""
    import importlib.machinery
    import sys
    for finder in sys.meta_path:
        if finder is importlib.machinery.PathFinder or not hasattr(finder, "find_distributions"):
            continue
        kind = type(finder)
        if (kind.__module__, kind.__qualname__) != ("importlib_metadata", "MetadataPathFinder"):
            return False
    return True


def litellm_import_defaults() -> None:
    """litellm fetches its model price map from GitHub while it is being imported, and logs each failed try to
    stderr (into the cell), unless LITELLM_LOCAL_MODEL_COST_MAP is set. Set it, unless the user set it either
    way, before anything a0nb runs may import litellm: a0nb's own provider, and every file a0nb loads (Agent
    Zero's files import litellm themselves, e.g. the `_error_retry` plugin)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def user_home() -> Path:
    """`$A0NB_HOME`, default `~/.a0nb` (worked out again only when the environment changed)."""
    generation = environ_generation()
    if _home[0] != generation:
        _home[:] = [generation, Path(os.environ.get("A0NB_HOME") or Path.home() / ".a0nb").expanduser()]
    return _home[1]


_home: list = [-1, None]
_environ: list = [0, {}]  # [generation, the environment as last seen]
_ENVIRON = type(os.environ)
_generations = itertools.count(1)  # each change its own number, also when two threads see it at once


def environ_generation() -> int:
    """A number that changes whenever `os.environ` changed since it was last asked: one dict comparison
    (done in C) against a copy, so callers can key what they derive from the environment on it."""
    env = os.environ
    # the dict behind os.environ (or whatever mapping was put in its place)
    data = env._data if env.__class__ is _ENVIRON else env  # type: ignore[attr-defined]
    seen = _environ
    if data != seen[1]:
        seen[:] = [next(_generations), dict(data)]
    return seen[0]
