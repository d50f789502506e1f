"""Which application points could have extensions, found without building the folder's hierarchy.

`%load_ext a0nb` fires four application points with no agent (app_points.py). Building the hierarchy for them
(plugin discovery through importlib.metadata, the roots, the trust scan, the extension index) costs more than
the rest of `%load_ext`, and almost always finds nothing. `held()` answers from stats alone, over a SUPERSET of
the places the hierarchy searches: a point it leaves out has no extension anywhere, so skipping it changes
nothing; a point it keeps is fired through the real registry, exactly as before."""
from __future__ import annotations

import os
from typing import Iterable

from a0nb.files.pip_plugins import CACHE_NAME, pip_plugins
from a0nb.resources import bundled_root, user_home


def held(points: Iterable[str], workdir: str, profile: str) -> set[str]:
    """The points among `points` that some root may serve: the notebook folder, its `.a0proj`, `$A0NB_HOME`,
    the bundled defaults, every folder under their `plugins/` (enabled or not), each with its `agents/<profile>`,
    in both folder spellings (`extensions/<point>`, `extensions/python/<point>`). Any pip-installed plugin
    (entry point `a0nb.plugins`) keeps every point: its folder is only known through the registry."""
    wanted = set(points)
    if pip_plugins():
        return wanted
    home, bundled = str(user_home()), str(bundled_root())
    bases = [os.path.join(workdir, ".a0proj"), workdir, home, bundled]
    for parent in (workdir, home, bundled):
        bases += _subfolders(os.path.join(parent, "plugins"))
    profile_dir = os.path.join("agents", profile)
    isdir, join = os.path.isdir, os.path.join
    found: set[str] = set()
    for base in bases:
        for root in (join(base, profile_dir), base):
            ext = join(root, "extensions")
            if isdir(ext):
                found.update(p for p in wanted if isdir(join(ext, p)) or isdir(join(ext, "python", p)))
    return found


def _subfolders(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return [e.path for e in entries if e.is_dir()]
    except OSError:
        return []


__all__ = ["CACHE_NAME", "held", "pip_plugins"]
