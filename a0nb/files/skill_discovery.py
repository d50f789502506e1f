"""Skill discovery: SKILL.md files found breadth-first under each root, duplicates resolved by root
priority, and `SkillIndex`, which re-walks only when a watched folder or file changed."""
from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from a0nb.diagnostics import Diagnostics
from a0nb.files.skill_parse import SKILL_FILE, Skill, normalise_name, parse_skill

__all__ = ["SkillIndex", "discover_skills", "is_dir_entry"]


@dataclass
class _Walk:
    """SKILL.md files found under one root, and what to stat to notice a change later."""

    files: list[Path] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    cut: bool = False


def _walk(root: Path, max_entries: int) -> _Walk:
    """Breadth-first, hidden parts skipped, linked folders followed once. Each queued folder is
    checked for SKILL.md directly, so one huge data folder cannot hide its sibling skills."""
    walk = _Walk()
    seen: set[str] = set()
    queue: deque[str] = deque([str(root)])
    budget = max_entries
    while queue:
        folder = queue.popleft()
        real = os.path.realpath(folder)
        if real in seen:
            continue
        seen.add(real)
        walk.dirs.append(folder)
        candidate = os.path.join(folder, SKILL_FILE)
        if os.path.isfile(candidate):
            walk.files.append(Path(candidate))
        if walk.cut:
            continue
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    if budget <= 0:
                        walk.cut = True
                        break
                    budget -= 1
                    if not entry.name.startswith(".") and is_dir_entry(entry):
                        queue.append(entry.path)
        except OSError:
            continue
    walk.files.sort()
    return walk


def is_dir_entry(entry: os.DirEntry[str]) -> bool:
    """`entry.is_dir()`, False when the entry vanished or cannot be stat'ed."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def discover_skills(
    roots: Sequence[tuple[str, Path]], diagnostics: Diagnostics, *, max_files_per_root: int = 5000
) -> dict[str, Skill]:
    """Every valid skill under `roots` ((label, folder), highest priority first), keyed by
    normalised name. The first root wins a duplicate name; the loser is named in a diagnostic."""
    return _discover(roots, diagnostics, max_files_per_root)[0]


def _discover(
    roots: Sequence[tuple[str, Path]], diagnostics: Diagnostics, max_entries: int
) -> tuple[dict[str, Skill], list[_Walk]]:
    skills: dict[str, Skill] = {}
    root_of: dict[str, int] = {}  # normalised name -> index of the root it came from
    walks: list[_Walk] = []
    for index, (label, folder) in enumerate(roots):
        folder = Path(folder)
        if not folder.is_dir():
            walks.append(_Walk(dirs=[str(folder)]))
            continue
        walk = _walk(folder, max_entries)
        walks.append(walk)
        if walk.cut:
            diagnostics.add("warning", "skill", f"walk cut at {max_entries} files; skills deeper in "
                            "large folders may be missing", folder,
                            fix="keep large data out of skills folders, or raise max_files_per_root")
        for path in walk.files:
            skill = parse_skill(path, label, diagnostics)
            if skill is not None:
                _keep(skills, root_of, index, skill, diagnostics)
    return skills, walks


def _keep(
    skills: dict[str, Skill], root_of: dict[str, int], index: int, skill: Skill, diagnostics: Diagnostics
) -> None:
    key = normalise_name(skill.name)
    winner = skills.get(key)
    if winner is None:
        skills[key], root_of[key] = skill, index
        return
    same_root = root_of[key] == index
    diagnostics.add(
        "warning" if same_root else "info", "skill",
        f"skill {skill.name!r} is also defined in {winner.path} ({winner.root_label}), which wins",
        skill.path, fix="rename one of them if both are wanted" if same_root else "",
    )


def _file_stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _dir_stamp(path: str) -> int | None:
    """A folder's size means nothing; its mtime tells that entries came, went or were renamed."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


class SkillIndex:
    """Discovery, cached: a call re-walks only when a watched folder's mtime or a SKILL.md's
    (mtime, size) changed. Each re-walk replaces the "skill" diagnostics with fresh ones."""

    def __init__(self, diagnostics: Diagnostics, *, max_files_per_root: int = 5000) -> None:
        self.diagnostics = diagnostics
        self.max_files_per_root = max_files_per_root
        self.discoveries = 0  # how often the disk was walked; the inspector and tests read it
        self._key: tuple[tuple[str, str], ...] | None = None
        self._skills: dict[str, Skill] = {}
        self._dirs: dict[str, int | None] = {}
        self._files: dict[str, tuple[int, int] | None] = {}

    def get(self, roots: Sequence[tuple[str, Path]]) -> dict[str, Skill]:
        key = tuple((label, str(path)) for label, path in roots)
        if key != self._key or self._changed():
            self._refresh(roots, key)
        return dict(self._skills)

    def _changed(self) -> bool:
        return any(_dir_stamp(d) != stamp for d, stamp in self._dirs.items()) or any(
            _file_stamp(f) != stamp for f, stamp in self._files.items()
        )

    def _refresh(self, roots: Sequence[tuple[str, Path]], key: tuple[tuple[str, str], ...]) -> None:
        self.diagnostics.clear("skill")
        self._skills, walks = _discover(roots, self.diagnostics, self.max_files_per_root)
        self._dirs = {d: _dir_stamp(d) for w in walks for d in w.dirs}
        self._files = {str(f): _file_stamp(str(f)) for w in walks for f in w.files}
        self._key = key
        self.discoveries += 1
