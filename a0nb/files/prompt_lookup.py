"""Prompt file lookup: the ordered prompt folders, which of them holds a name, and the folder
listings behind that (cached by folder mtime, or trusted until the owner invalidates)."""
from __future__ import annotations

import fnmatch
import functools
import os
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Iterable, Sequence

__all__ = ["PromptDir", "PromptFolders", "prompt_dirs", "valid_name", "stat_key", "RACY_NS", "racy_ns"]

# A file or folder changed less than this long before we read it may change again within the same
# timestamp tick (coarse file-system clocks), so such reads are not trusted as cache entries.
RACY_NS = 2_000_000_000
# how long after a change a folder's mtime may still be repeated by the next change when its file system keeps
# sub-millisecond times: the stamping clock's tick (Linux <= 10 ms, Windows 15.6 ms), with room to spare
_FINE_RACY_NS = 50_000_000


def racy_ns(mtime_ns: int) -> int:
    """How long after `mtime_ns` a change may still get the same mtime: a clock tick where the file system keeps
    sub-millisecond times (the mtime has such digits), else RACY_NS (file systems with 1 s or 2 s times)."""
    return _FINE_RACY_NS if mtime_ns % 1_000_000 else RACY_NS

Listings = dict[int, frozenset[str]]  # one render's memo: folder index -> file names


@dataclass(frozen=True)
class PromptDir:
    """One prompts folder of the hierarchy."""

    path: Path
    label: str


def prompt_dirs(roots: Iterable[Any]) -> list[PromptDir]:
    """`PromptDir`s for `paths.Root`s (their `prompts/` sub-folders), existing or not, in order."""
    return [PromptDir(Path(r.path) / "prompts", r.label) for r in roots]


@functools.lru_cache(maxsize=2048)  # a pure function of the string, asked on every render that is not cached
def valid_name(name: str) -> bool:
    """A name relative to the prompt folders: not absolute, no drive, no `..`, no NUL."""
    if not name or "\x00" in name or os.path.isabs(name) or PureWindowsPath(name).anchor:
        return False
    return ".." not in PurePosixPath(name.replace("\\", "/")).parts


def stat_key(path: Path) -> tuple[int, int] | None:
    """(mtime_ns, size) of a file, None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class PromptFolders:
    """The prompt folders, highest priority first, and which of them hold a given file name."""

    def __init__(self, dirs: Sequence[PromptDir]) -> None:
        self.dirs: tuple[PromptDir, ...] = tuple(dirs)  # (set through set_dirs, which invalidates)
        self._listings: dict[Path, tuple[int | None, frozenset[str]]] = {}
        # An owner that watches the prompt folders itself (the agent's Hierarchy) sets this and calls
        # invalidate() on a change, so a warm render does not stat every folder again.
        self.trust_listings = False
        self._settled = False

    def invalidate(self) -> None:
        self._listings.clear()
        self._settled = False

    def settled(self) -> bool:
        """Trusted, and every folder's listing known and older than a timestamp tick: what is found by name
        (not by sub-path) stays as it is until invalidate()."""
        if not self._settled and self.trust_listings:
            got = [self._listings.get(d.path) for d in self.dirs]
            self._settled = all(entry is not None and entry[0] is not None for entry in got)
        return self._settled

    def find_all(self, name: str) -> list[PromptDir]:
        if not valid_name(name):
            return []
        memo: Listings = {}
        return [d for i, d in enumerate(self.dirs) if self.has(memo, i, name)]

    def names(self, glob: str) -> list[tuple[str, PromptDir]]:
        memo: Listings = {}
        found: dict[str, PromptDir] = {}
        for i, d in enumerate(self.dirs):
            for name in fnmatch.filter(self._listing(memo, i), glob):
                found.setdefault(name, d)
        return sorted(found.items())

    def has(self, memo: Listings, index: int, name: str) -> bool:
        if "/" not in name and "\\" not in name:
            return name in self._listing(memo, index)
        try:
            return (self.dirs[index].path / name).is_file()
        except (OSError, ValueError):
            return False

    def locate(self, memo: Listings, name: str, start: int) -> int | None:
        """Index of the first folder at or after `start` that holds `name`."""
        return next((i for i in range(start, len(self.dirs)) if self.has(memo, i, name)), None)

    def lower(self, memo: Listings, name: str, index: int) -> tuple[Path, ...]:
        """The copies of `name` below folder `index` (the ones it overrides)."""
        return tuple(self.dirs[j].path / name for j in range(index + 1, len(self.dirs)) if self.has(memo, j, name))

    def _listing(self, memo: Listings, index: int) -> frozenset[str]:
        got = memo.get(index)
        if got is None:
            got = memo[index] = self._scan(self.dirs[index].path)
        return got

    def _scan(self, folder: Path) -> frozenset[str]:
        if self.trust_listings:
            trusted = self._listings.get(folder)
            if trusted is not None and trusted[0] is not None:
                return trusted[1]
        try:
            mtime = os.stat(folder).st_mtime_ns
        except (OSError, ValueError):
            if self.trust_listings:  # a missing folder stays missing until the owner invalidates
                self._listings[folder] = (-1, frozenset())
            return frozenset()
        hit = self._listings.get(folder)
        if hit is not None and hit[0] == mtime:
            return hit[1]
        started = time.time_ns()
        try:
            with os.scandir(folder) as entries:
                names = frozenset(e.name for e in entries if e.is_file())
        except OSError:
            names = frozenset()
        self._listings[folder] = (mtime if started - mtime > RACY_NS else None, names)
        return names
