"""Which application points could have extensions, found without building the folder's hierarchy.

`%load_ext a0nb` fires four application points with no agent (app_points.py). Building the hierarchy for them
(plugin discovery through importlib.metadata, the roots, the trust scan, the extension index) costs more than
the rest of `%load_ext`, and almost always finds nothing. `held()` answers from stats alone, over a SUPERSET of
the places the hierarchy searches: a point it leaves out has no extension anywhere, so skipping it changes
nothing; a point it keeps is fired through the real registry, exactly as before."""
from __future__ import annotations

import json
import os
import sys
import time
from typing import Iterable

from a0nb.resources import bundled_root, distributions_only_on_sys_path, user_home

ENTRY_POINT_GROUP = b"a0nb.plugins"  # (a0nb.files.plugins.ENTRY_POINT_GROUP, not imported: it pulls in yaml)
RACY_NS = 2_000_000_000  # a folder changed this recently may change again within its mtime's resolution
CACHE_NAME = "pip-plugins.json"


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


def pip_plugins() -> bool:
    """Does a distribution on sys.path declare an `a0nb.plugins` entry point? Each sys.path folder's answer
    (read from its `*.dist-info`/`*.egg-info` entry_points.txt) is kept in `$A0NB_HOME/cache/pip-plugins.json`
    under the folder's mtime: installing, upgrading or removing a distribution adds or removes a folder there,
    which changes that mtime. A folder changed in the last RACY_NS is read every time. What cannot be read this
    way (a zip on sys.path, a custom finder of distributions) answers yes."""
    if not distributions_only_on_sys_path():
        return True
    cache_file = os.path.join(str(user_home()), "cache", CACHE_NAME)
    cache = _read(cache_file)
    now, changed, found = time.time_ns(), False, False
    for entry in dict.fromkeys(os.path.abspath(e or ".") for e in sys.path):
        try:
            mtime = os.stat(entry).st_mtime_ns
        except OSError:
            continue  # (importlib.metadata skips a missing entry too)
        seen = cache.get(entry)
        if isinstance(seen, list) and len(seen) == 2 and seen[0] == mtime:
            hit = bool(seen[1])
        else:
            hit = _declares(entry)
            if now - mtime > RACY_NS:
                cache[entry], changed = [mtime, hit], True
        if hit:
            found = True
            break
    if changed:
        _write(cache_file, cache)
    return found


def _declares(entry: str) -> bool:
    if not os.path.isdir(entry):
        return True  # a zip or an egg file on sys.path: not read here
    metas = [os.path.join(entry, "EGG-INFO")] if entry.endswith(".egg") else []
    try:
        with os.scandir(entry) as entries:
            metas += [e.path for e in entries if e.name.endswith((".dist-info", ".egg-info"))]
    except OSError:
        return False
    for meta in metas:
        try:
            with open(os.path.join(meta, "entry_points.txt"), "rb") as f:
                if ENTRY_POINT_GROUP in f.read():
                    return True
        except OSError:
            continue
    return False


def _subfolders(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return [e.path for e in entries if e.is_dir()]
    except OSError:
        return []


def _read(path: str) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: str, data: dict[str, object]) -> None:
    """Best effort (a read-only home only means reading the folders again next time); atomic, so a reader never
    sees half a file."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


__all__ = ["CACHE_NAME", "held", "pip_plugins"]
