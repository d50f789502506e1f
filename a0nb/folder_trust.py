"""Folder trust, like an editor's workspace trust: Python files, plugins and model endpoints found in a
folder run (or are used) only once the user has trusted that folder.

Trusted without asking: the bundled defaults, `$A0NB_HOME`, installed packages. Ways to trust a folder:
`a0nb.trust(path)` / `%a0 trust [PATH]` (remembered in `$A0NB_HOME/trusted_folders.txt`), the widget prompt
in JupyterLab, and `A0NB_TRUST` — folders separated by `os.pathsep`, each trusting itself and everything
below it, or `*` for every folder (CI and test suites)."""
from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Iterable

from a0nb.atomic_io import write_text
from a0nb.errors import ConfigError
from a0nb.resources import PACKAGE_DIR, bundled_root, environ_generation, user_home

ENV = "A0NB_TRUST"
FILE_NAME = "trusted_folders.txt"
# the bundled defaults in a checkout live at the repository root: only these folders of it are bundled content
# (the repository's notebooks are a folder like any other)
BUNDLED_PARTS = ("prompts", "agents", "plugins", "tools", "extensions", "providers", "skills", "kernel", "features")
# settings a folder may only set once trusted: where requests (and the user's keys) go, and what they run
GUARDED_SETTINGS = ("api_base", "api_key_env", "utility_api_base", "utility_api_key_env", "model_kwargs",
                    "utility_model_kwargs", "mcp_servers", "plugin_sources", "approval")


class UntrustedFolderWarning(UserWarning):
    """A folder holds code or model endpoints that a0nb did not use because the folder is not trusted."""


def _norm(path: Path | str) -> Path:
    return Path(os.path.abspath(os.path.expanduser(str(path))))


def _real(path: Path | str) -> Path:
    try:
        return Path(os.path.realpath(os.path.expanduser(str(path))))
    except OSError:
        return _norm(path)


def remembered_file(home: Path | None = None) -> Path:
    return (home or user_home()) / FILE_NAME


def remembered(home: Path | None = None) -> list[Path]:
    """The folders `trust()` remembered (one per line)."""
    return [_real(line) for line in _remembered_lines(home or user_home())]


def always_trusted(home: Path | None = None) -> list[Path]:
    """The bundled folders, the a0nb home and installed packages."""
    return list(_always_trusted(bundled_root(), home or user_home()))


@functools.lru_cache(maxsize=16)  # asked before every loader and extension import: resolve these paths once
def _always_trusted(bundled: Path, home: Path) -> tuple[Path, ...]:
    import sysconfig  # (here, not at import: settings imports this module at `%load_ext`)
    out = [_real(bundled / part) for part in BUNDLED_PARTS] + [_real(PACKAGE_DIR), _real(home)]
    for key in ("purelib", "platlib"):
        try:
            out.append(_real(sysconfig.get_paths()[key]))
        except KeyError:
            pass
    return tuple(out)


def trusted_folders(home: Path | None = None) -> tuple[bool, list[Path]]:
    """(every folder is trusted, the trusted folders)."""
    everything, folders, _ = _trusted(home or user_home())
    return everything, list(folders)


def _trusted(home: Path) -> tuple[bool, tuple[Path, ...], tuple[object, ...]]:
    """`trusted_folders` and the key it was worked out for: worked out again when the environment, the
    remembered list (this process's `trust()`/`untrust()` or another's write) or where a listed path leads changed."""
    hit = _lists.get(home)
    if hit is not None and hit[2] == _list_key(home, hit[3]):
        return hit[0], hit[1], hit[2]
    seen = _list_key(home, ())  # taken before reading: a change during the read is seen next time
    items = [v.strip() for v in os.environ.get(ENV, "").split(os.pathsep) if v.strip()]
    listed = tuple(os.path.expanduser(p) for p in items + _remembered_lines(home) if p != "*")
    key = (*seen[:3], tuple(_identity(p)[:2] for p in listed))  # (folders: where they lead, not their mtime)
    folders = tuple(always_trusted(home) + [_real(p) for p in listed])
    if len(_lists) > 64:
        _lists.clear()
    _lists[home] = ("*" in items, folders, key, listed)
    return "*" in items, folders, key


def _list_key(home: Path, listed: tuple[str, ...]) -> tuple[object, ...]:
    name = _file_names.get(home)
    if name is None:
        name = _file_names[home] = str(remembered_file(home))
    return environ_generation(), _writes[0], _identity(name), tuple(_identity(p)[:2] for p in listed)


def _identity(path: str) -> tuple[int, ...]:
    """What changes when a file is rewritten (a new inode: writes are atomic) or a path leads elsewhere."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ()
    return st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size


def _remembered_lines(home: Path) -> list[str]:
    try:
        text = remembered_file(home).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _under(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def is_trusted(path: Path | str, home: Path | None = None) -> bool:
    """Whether `path` (a file or folder) is inside a trusted folder. The answer is kept for the path while the
    trust settings and the file or folder the path leads to (through any symlink) stay the same."""
    everything, folders, key = _trusted(home or user_home())
    if everything:
        return True
    name = os.fspath(path)
    target = _identity(name)
    if not target:  # nothing there (yet): worked out each time
        return _under(_real(path), folders) or _under(_norm(path), folders)
    asked = (name, target[:2], key)
    answer = _answers.get(asked)
    if answer is None:
        answer = _under(_real(path), folders) or _under(_norm(path), folders)
        if len(_answers) > 4096:
            _answers.clear()
        _answers[asked] = answer
    return answer


_lists: dict[Path, tuple[bool, tuple[Path, ...], tuple[object, ...], tuple[str, ...]]] = {}
_file_names: dict[Path, str] = {}
_answers: dict[tuple[object, ...], bool] = {}
_writes = [0]  # bumped by trust() and untrust(): this process's own changes are seen whatever the clock


def trust(path: Path | str = ".", home: Path | None = None) -> Path:
    """Trust `path` (a folder, and everything below it) from now on; remembered under the a0nb home."""
    folder = _real(path)
    if not folder.is_dir():
        raise ConfigError(f"cannot trust {folder}: it is not a folder (give the notebook's folder)")
    target = remembered_file(home)
    known = remembered(home)
    if folder not in known:
        lines = [str(p) for p in known] + [str(folder)]
        write_text(target, "# folders whose Python files, plugins and model endpoints a0nb may use\n"
                   + "\n".join(lines) + "\n", "trusted-folders list")
        _writes[0] += 1
    return folder


def untrust(path: Path | str, home: Path | None = None) -> None:
    """Forget a remembered folder (A0NB_TRUST and the built-in folders are not changed)."""
    folder = _real(path)
    known = [p for p in remembered(home) if p != folder]
    target = remembered_file(home)
    if target.exists():
        write_text(target, "".join(f"{p}\n" for p in known), "trusted-folders list")
        _writes[0] += 1


def how_to_trust(folder: Path | str) -> str:
    return (f"if you trust {folder}, run `%a0 trust {folder}` or `a0nb.trust({str(folder)!r})` "
            f"(or set {ENV}={folder} for CI)")


__all__ = ["UntrustedFolderWarning", "trust", "untrust", "is_trusted", "trusted_folders", "how_to_trust", "GUARDED_SETTINGS", "ENV"]
