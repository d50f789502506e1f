"""A bounded, gitignore-aware text tree of a folder, for the model's view of a workdir or a skill.
The limits cut the walk itself (entries scanned and stat'ed), not only the printed lines."""
from __future__ import annotations

import functools

import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

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
class _Budget:
    """What is left of the global limits while the walk goes on."""

    lines: int
    scans: int
    cut: bool = False
    last_parent: _Node | None = None


def clean_ignore_list(text: str) -> str:
    """The ignore patterns as shown to the model: comments and blank lines dropped, one per line."""
    kept = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    return "\n".join(k for k in kept if k) or "nothing ignored"


def file_tree(
    root: Path,
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
    root = Path(root)
    head = str(root).rstrip("/\\") + "/"
    if not root.is_dir():
        return f"{head}\n# not a folder"
    is_ignored = _matcher(ignore)
    top = _Node(head, True)
    budget = _Budget(lines=max(2, max_lines) - 1, scans=max_total_scan)
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
    try:
        with os.scandir(path) as it:
            for n, item in enumerate(it):
                if n >= cap:
                    if budget.scans <= 0:
                        _cut(budget)
                    return entries, True, False
                budget.scans -= 1
                entry = _entry(item, rel, is_ignored)
                if entry is not None:
                    entries.append(entry)
    except (PermissionError, NotADirectoryError, FileNotFoundError):
        return [], False, True
    except OSError:
        return [], False, True
    return entries, False, False


def _entry(item: os.DirEntry[str], rel: str, is_ignored: Callable[[str], bool]) -> _Entry | None:
    name = item.name
    if name in _NEVER_LISTED:
        return None
    try:
        is_link = item.is_symlink()
        is_dir = item.is_dir()  # follows links, so a linked folder shows as a folder
    except OSError:
        return None
    if is_ignored(rel + name + ("/" if is_dir else "")):
        return None
    try:
        mtime = item.stat(follow_symlinks=False).st_mtime
    except OSError:
        mtime = 0.0
    # Linked folders are shown but not opened: links can form cycles.
    return _Entry(name, is_dir, is_dir and not is_link and name not in _NEVER_OPENED, mtime)


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
