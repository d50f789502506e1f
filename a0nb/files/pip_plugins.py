"""Does any installed distribution declare an `a0nb.plugins` entry point? Answered from each sys.path folder's
`*.dist-info`/`*.egg-info` entry_points.txt and kept on disk per folder mtime, so that a process whose folders
did not change since answers with a stat per folder: no import of importlib.metadata (about 40 ms) and no scan of
every distribution's metadata. `%load_ext`'s application points (notebook/app_roots.held) and the hierarchy's
plugin discovery (files/plugins.ENTRY_POINTS, which reads the entry points only on a yes) both ask it."""
from __future__ import annotations

import json
import os
import sys
import time

from a0nb.atomic_io import StorageError, write_text
from a0nb.files.prompt_lookup import RACY_NS
from a0nb.resources import distributions_only_on_sys_path, user_home

ENTRY_POINT_GROUP = "a0nb.plugins"
_GROUP = ENTRY_POINT_GROUP.encode()  # (as entry_points.txt holds it)
CACHE_NAME = "pip-plugins.json"


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
                if _GROUP in f.read():
                    return True
        except OSError:
            continue
    return False


def _read(path: str) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: str, data: dict[str, object]) -> None:
    """Best effort: a read-only home only means reading the folders again next time."""
    try:
        write_text(path, json.dumps(data), "plugin cache")
    except StorageError:
        pass


__all__ = ["CACHE_NAME", "ENTRY_POINT_GROUP", "pip_plugins"]
