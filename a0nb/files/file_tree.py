"""A bounded, gitignore-aware text tree of a folder, for the model's view of a workdir or a skill.
The limits cut the walk itself (entries scanned and stat'ed), not only the printed lines. A tree is kept
with what its walk read (each folder's identity and mtime, each entry's mtime) and reused while a stat of
each of those says nothing changed: an unchanged workdir costs a stat per folder and per (not ignored) entry
read, not a walk (the order is by mtime, and a write changes only the file's own)."""
from __future__ import annotations

import functools

import os
import stat
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from a0nb.files.file_events import Quiet, quiet_for
from a0nb.files.prompt_lookup import racy_ns

__all__ = ["file_tree", "clean_ignore_list"]

# Never useful to a model and often huge; skipped whatever the ignore patterns say.
_NEVER_LISTED = frozenset({".ipynb_checkpoints"})
# Listed (so the model knows it is a repository) but never opened.
_NEVER_OPENED = frozenset({".git"})

_INDENT = "  "


@dataclass
class _Node:
    name: str
    is_dir: bool
    children: list[_Node | str] = field(default_factory=list)  # a str child is a `# ...` comment


@dataclass
class _Entry:
    name: str
    is_dir: bool
    openable: bool
    mtime: float


@dataclass
class _Watch:
    """What one walk read, enough to tell by stats alone whether a new walk would print the same tree.
    Folders: (path, (inode, device, mtime, ctime)); a folder changed within `racy_ns` of its read (a clock tick
    where mtimes have sub-millisecond digits, else 2 s) could change again within the same timestamp tick, so
    its scanned (name, is folder) list is kept and compared too.
    Entries: the path and mtime of each entry the walk stat'ed (the order within a folder is by mtime). Links:
    (path, is folder) of each symbolic link, whose target can change without its folder changing."""

    folders: list[tuple[str, tuple[int, int, int, int] | None]] = field(default_factory=list)
    listings: dict[str, tuple[tuple[int, int, int, int], list[tuple[str, bool | None]] | None, bool]] = field(
        default_factory=dict)
    paths: list[str] = field(default_factory=list)
    mtimes: list[float] = field(default_factory=list)
    links: list[tuple[str, bool | None]] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)  # the folders among `paths` (listed, whether opened or not)

    def folders_to_watch(self) -> list[str] | None:
        """Every folder whose events stand for the stats above: those read and those listed (an entry added in
        a folder that was not opened moves its mtime); None with a link (its target changes elsewhere)."""
        if self.links:
            return None
        return list(dict.fromkeys([path for path, sig in self.folders if sig is not None] + self.dirs))


@dataclass
class _Budget:
    """What is left of the global limits while the walk goes on."""

    lines: int
    scans: int
    cut: bool = False
    last_parent: _Node | None = None
    watch: _Watch = field(default_factory=_Watch)
    now: int = field(default_factory=time.time_ns)


@functools.lru_cache(maxsize=32)  # a pure function of the text, asked on every loop step
def clean_ignore_list(text: str) -> str:
    """The ignore patterns as shown to the model: comments and blank lines dropped, one per line."""
    kept = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    return "\n".join(k for k in kept if k) or "nothing ignored"


def file_tree(
    root: Path | str,
    *,
    max_depth: int = 5,
    max_files: int = 20,
    max_folders: int = 20,
    max_lines: int = 250,
    ignore: str = "",
    max_scan: int = 1000,
    max_total_scan: int = 20000,
) -> str:
    """Text tree of `root`: breadth-first (shallow entries win the line budget), folders first,
    newest first within a folder. `ignore` is gitignore text, matched relative to `root`.

    `max_scan` bounds the entries read from one folder, `max_total_scan` those read overall."""
    key = (os.fspath(root), max_depth, max_files, max_folders, max_lines, ignore, max_scan, max_total_scan)
    hit = _TREES.get(key)
    if hit is not None:
        if hit[2] is not None and hit[2].quiet():  # no file event in its folders since the last check
            return hit[0]
        folders = hit[1].folders_to_watch()
        quiet = quiet_for(folders) if folders is not None else None  # (before the stats)
        if _unchanged(hit[1]):
            _TREES[key] = (hit[0], hit[1], quiet)
            return hit[0]
    budget = _Budget(lines=max(2, max_lines) - 1, scans=max_total_scan)
    root = Path(root)
    if _folder_identity(budget.watch, str(root)) is None:
        _TREES.pop(key, None)
        return str(root).rstrip("/\\") + "/\n# not a folder"
    tree = _walk(root, max_depth, max_files, max_folders, max_lines, ignore, max_scan, max_total_scan, budget)
    if len(_TREES) >= _KEPT:
        _TREES.clear()  # (many trees asked for: started again, one atomic step whatever other threads do)
    _TREES[key] = (tree, budget.watch, None)  # (a Quiet is taken at the next check, before its stats)
    return tree


def _walk(root: Path, max_depth: int, max_files: int, max_folders: int, max_lines: int, ignore: str,
          max_scan: int, max_total_scan: int, budget: _Budget) -> str:
    head = str(root).rstrip("/\\") + "/"
    is_ignored = _matcher(ignore)
    top = _Node(head, True)
    queue: deque[tuple[_Node, str, str, int]] = deque([(top, str(root), "", 0)])
    limits = (max_files, max_folders, max_scan)
    while queue and not budget.cut and max_depth > 0:
        node, path, rel, depth = queue.popleft()
        for child, name in _expand(node, path, rel, is_ignored, limits, budget):
            if depth + 1 < max_depth:
                queue.append((child, os.path.join(path, name), rel + name + "/", depth + 1))
    lines = _render(top)
    if budget.cut:
        limit = f"{max_total_scan} entries scanned" if budget.scans <= 0 else f"{max_lines} lines"
        lines.append(f"# more not shown (limit: {limit})")
    return "\n".join(lines)


# A process-wide cache, not state: the compiled matcher is a pure function of the ignore text.
@functools.lru_cache(maxsize=32)
def _matcher(ignore: str) -> Callable[[str], bool]:
    lines = [ln for ln in ignore.splitlines() if ln.strip()]
    if not lines:
        return lambda _rel: False
    import pathspec  # only needed when there are patterns

    return pathspec.GitIgnoreSpec.from_lines(lines).match_file


def _expand(
    node: _Node,
    path: str,
    rel: str,
    is_ignored: Callable[[str], bool],
    limits: tuple[int, int, int],
    budget: _Budget,
) -> list[tuple[_Node, str]]:
    """Scan one folder, attach its children (within the caps), return (node, name) of the
    sub-folders to open next."""
    max_files, max_folders, max_scan = limits
    entries, not_scanned, unreadable = _scan(path, rel, is_ignored, min(max_scan, budget.scans), budget)
    if unreadable:
        _add(node, "# unreadable", budget)
        return []
    dirs = sorted((e for e in entries if e.is_dir), key=_newest_first)
    files = sorted((e for e in entries if not e.is_dir), key=_newest_first)
    to_open: list[tuple[_Node, str]] = []
    for entry in _capped(dirs, max_folders):
        child = _Node(entry.name + "/", True)
        if not _add(node, child, budget):
            return to_open
        if entry.openable:
            to_open.append((child, entry.name))
    if len(dirs) > _shown(len(dirs), max_folders) and not _add(
        node, f"# {len(dirs) - max_folders} more folders", budget
    ):
        return to_open
    for entry in _capped(files, max_files):
        if not _add(node, _Node(entry.name, False), budget):
            return to_open
    if len(files) > _shown(len(files), max_files) and not _add(
        node, f"# {len(files) - max_files} more files", budget
    ):
        return to_open
    if not_scanned:
        _add(node, "# more entries not scanned", budget)
    return to_open


def _scan(
    path: str, rel: str, is_ignored: Callable[[str], bool], cap: int, budget: _Budget
) -> tuple[list[_Entry], bool, bool]:
    """(entries, stopped early, unreadable). Ignored entries are never stat'ed."""
    entries: list[_Entry] = []
    watch = budget.watch
    sig = _folder_identity(watch, path) if rel else watch.folders[0][1]  # (the root's: taken before the walk)
    listed: list[tuple[str, bool | None]] | None = None
    if sig is not None and budget.now - (changed := max(sig[2], sig[3])) < racy_ns(changed):
        listed, racy = [], sig
        watch.listings[path] = (racy, listed, False)
    try:
        with os.scandir(path) as it:
            for n, item in enumerate(it):
                if n >= cap:
                    if listed is not None:
                        watch.listings[path] = (racy, listed, True)
                    if budget.scans <= 0:
                        _cut(budget)
                    return entries, True, False
                budget.scans -= 1
                entry = _entry(item, rel, is_ignored, watch, listed)
                if entry is not None:
                    entries.append(entry)
    except OSError:  # (unreadable, not a folder, gone)
        if listed is not None:
            watch.listings[path] = (racy, None, False)
        return [], False, True
    return entries, False, False


def _entry(item: os.DirEntry[str], rel: str, is_ignored: Callable[[str], bool], watch: _Watch,
           listed: list[tuple[str, bool | None]] | None) -> _Entry | None:
    name = item.name
    if name in _NEVER_LISTED:
        if listed is not None:
            listed.append((name, None))
        return None
    try:
        is_link = item.is_symlink()
        is_dir = item.is_dir()  # follows links, so a linked folder shows as a folder
    except OSError:
        watch.links.append((item.path, None))
        if listed is not None:
            listed.append((name, None))
        return None
    if listed is not None:
        listed.append((name, is_dir))
    if is_link:
        watch.links.append((item.path, is_dir))
    if is_ignored(rel + name + ("/" if is_dir else "")):
        return None
    try:
        mtime = item.stat(follow_symlinks=False).st_mtime
    except OSError:
        mtime = 0.0
    watch.paths.append(item.path)
    watch.mtimes.append(mtime)
    if is_dir and not is_link:
        watch.dirs.append(item.path)
    # Linked folders are shown but not opened: links can form cycles.
    return _Entry(name, is_dir, is_dir and not is_link and name not in _NEVER_OPENED, mtime)


# ---------------------------------------------------------------- reuse: a tree while what it read is unchanged

# A process-wide cache, not state: each tree is checked against the file system before it is reused.
_TREES: dict[tuple[object, ...], tuple[str, _Watch, Quiet | None]] = {}
_KEPT = 16


def _identity(path: str) -> tuple[int, int, int, int] | None:
    """(inode, device, mtime, ctime) of a folder (links followed), None when it is not one."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    return (st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns)


def _folder_identity(watch: _Watch, path: str) -> tuple[int, int, int, int] | None:
    sig = _identity(path)
    watch.folders.append((path, sig))
    return sig


def _listing(path: str, cap: int) -> tuple[list[tuple[str, bool | None]] | None, bool]:
    """What `_scan` reads of a folder: (name, is folder) of its first `cap` entries, and whether there are more."""
    listed: list[tuple[str, bool | None]] = []
    try:
        with os.scandir(path) as it:
            for n, item in enumerate(it):
                if n >= cap:
                    return listed, True
                name = item.name
                try:
                    listed.append((name, None if name in _NEVER_LISTED else item.is_dir()))
                except OSError:
                    listed.append((name, None))
    except OSError:
        return None, False
    return listed, False


def _link_kind(path: str) -> bool | None:
    """A link's DirEntry.is_dir(): False when its target is gone, None when it cannot be told."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return None


def _unchanged(watch: _Watch) -> bool:
    """Would a walk now read what this one read? Every folder keeps its identity and mtime (an entry added,
    removed or renamed changes it), every entry its mtime, every link its kind; a folder changed shortly
    before the walk also lists the same entries (compared until its change is older than `racy_ns`)."""
    for path, sig in watch.folders:
        if _identity(path) != sig:
            return False
    listings = watch.listings
    if listings:
        now = time.time_ns()
        for path, (sig, listed, more) in list(listings.items()):
            if _listing(path, len(listed) if listed is not None else 0) != (listed, more):
                return False
            if now - (changed := max(sig[2], sig[3])) >= racy_ns(changed):  # a change from now on moves its mtime
                listings.pop(path, None)
    try:  # (one Python call for them all: a large tree is a stat per entry)
        if [os.lstat(path).st_mtime for path in watch.paths] != watch.mtimes:
            return False
    except (OSError, ValueError):  # gone, or not stat'ed by the walk either: walk again
        return False
    for path, kind in watch.links:
        if _link_kind(path) != kind:
            return False
    return True


def _newest_first(e: _Entry) -> tuple[float, str]:
    return (-e.mtime, e.name)


def _shown(total: int, cap: int) -> int:
    """A single overflow item takes no more room than its `# 1 more` comment, so show it."""
    return total if total <= cap + 1 else cap


def _capped(items: list[_Entry], cap: int) -> list[_Entry]:
    return items[: _shown(len(items), cap)]


def _add(node: _Node, child: _Node | str, budget: _Budget) -> bool:
    """Attach a line if the budget allows. On the first refusal the line added last gives its
    place to the note saying the tree was cut, so the output never exceeds `max_lines`."""
    if budget.cut:
        return False
    if budget.lines <= 0:
        _cut(budget)
        return False
    node.children.append(child)
    budget.lines -= 1
    budget.last_parent = node
    return True


def _cut(budget: _Budget) -> None:
    if budget.cut:
        return
    budget.cut = True
    if budget.lines <= 0 and budget.last_parent is not None:
        budget.last_parent.children.pop()


def _render(top: _Node) -> list[str]:
    lines = [top.name]
    stack: list[tuple[_Node | str, int]] = [(c, 1) for c in reversed(top.children)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, str):
            lines.append(_INDENT * level + item)
            continue
        lines.append(_INDENT * level + item.name)
        stack.extend((c, level + 1) for c in reversed(item.children))
    return lines
