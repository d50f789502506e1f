"""Skills: search over discovered skills, the text the model sees when it loads one, and safe reads of
files inside a skill's folder; re-exports parsing (skill_parse) and discovery (skill_discovery)."""
from __future__ import annotations

import codecs
import os
import re
from pathlib import Path
from typing import Iterable

from a0nb.errors import RepairableError
from a0nb.files.file_tree import file_tree
from a0nb.files.skill_discovery import SkillIndex, discover_skills, is_dir_entry
from a0nb.files.skill_parse import SKILL_FILE, SKILL_TREE_IGNORE, Skill, normalise_name, parse_skill

__all__ = [
    "Skill", "SkillIndex", "discover_skills", "normalise_name", "parse_skill", "read_skill_file",
    "search_skills", "skill_text", "SKILL_FILE", "SKILL_TREE_IGNORE",
]


def search_skills(skills: Iterable[Skill], query: str, limit: int = 25) -> list[tuple[Skill, int]]:
    """Skills matching `query`, best first: per whitespace-separated term, +3 when it is in the
    name, +2 in the description, +1 in any tag (all case-insensitive)."""
    terms = query.lower().split()
    if not terms or limit <= 0:
        return []
    hits: list[tuple[Skill, int]] = []
    for skill in skills:
        name, description = skill.name.lower(), skill.description.lower()
        tags = [t.lower() for t in skill.tags]
        score = 0
        for term in terms:
            score += 3 * (term in name) + 2 * (term in description) + any(term in t for t in tags)
        if score > 0:
            hits.append((skill, score))
    hits.sort(key=lambda hit: (-hit[1], hit[0].name))
    return hits[:limit]


def skill_text(skill: Skill) -> str:
    """What the model reads when it loads `skill`."""
    lines = [f"Skill: {skill.name}", f"Folder: {skill.folder}"]
    facts = (
        ("Version", skill.version), ("Author", skill.author), ("License", skill.license),
        ("Compatibility", skill.compatibility), ("Tags", ", ".join(skill.tags)),
        ("Allowed tools", ", ".join(skill.allowed_tools)), ("Triggers", ", ".join(skill.triggers)),
    )
    lines += [f"{label}: {value}" for label, value in facts if value]
    lines += ["", "What it is for:", skill.description, "", "Instructions (from SKILL.md):", skill.body or "(none)", ""]
    if _has_other_files(skill.folder):
        lines.append("Files in the skill's folder. To read one, call `skills_tool:read_file` with "
                     "`skill_name` and `file_path` relative to the folder:")
        lines.append(file_tree(skill.folder, max_depth=10, max_files=100, max_folders=100,
                               max_lines=300, ignore=SKILL_TREE_IGNORE))
    else:
        lines.append("The skill's folder holds no other files.")
    return "\n".join(lines)


def _has_other_files(folder: Path) -> bool:
    try:
        with os.scandir(folder) as it:
            return any(e.name != SKILL_FILE and not e.name.startswith(".") for e in it)
    except OSError:
        return False


def read_skill_file(skill: Skill, relpath: str, max_chars: int = 20000) -> str:
    """Text of a file inside the skill's folder, cut at `max_chars`. Paths that leave the folder
    (`..`, absolute, or through a link) raise RepairableError; binary files give a short note."""
    target = _inside(skill, relpath)
    try:
        size = target.stat().st_size
        with open(target, "rb") as fh:
            raw = fh.read(max_chars * 4 + 4)
    except OSError as exc:
        raise RepairableError(f"cannot read {relpath!r} in skill {skill.name!r}: {exc.strerror or exc}") from None
    if b"\x00" in raw[:8192]:
        return f"({relpath} is a binary file of {size} bytes; its content is not shown)"
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        text = decoder.decode(raw, final=len(raw) >= size)
    except UnicodeDecodeError:
        return f"({relpath} is not UTF-8 text ({size} bytes); its content is not shown)"
    if len(text) > max_chars or len(raw) < size:
        return text[:max_chars] + f"\n[... cut at {max_chars} characters; the file has {size} bytes]"
    return text


def _inside(skill: Skill, relpath: str) -> Path:
    rel = (relpath or "").strip().strip("*").strip()
    if not rel:
        raise RepairableError(f"give `file_path`, a path relative to the folder of skill {skill.name!r}")
    parts = re.split(r"[\\/]+", rel)
    if os.path.isabs(rel) or rel.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", rel):
        raise RepairableError(f"{relpath!r} is an absolute path; give a path relative to the folder of "
                              f"skill {skill.name!r}, such as {SKILL_FILE!r}")
    if ".." in parts:
        raise RepairableError(f"{relpath!r} leaves the folder of skill {skill.name!r}; `..` is not allowed")
    folder = skill.folder.resolve()
    target = (skill.folder / rel).resolve()
    if target != folder and folder not in target.parents:
        raise RepairableError(f"{relpath!r} is a link that leads outside the folder of skill {skill.name!r}; "
                              "only files inside the folder can be read")
    if target.is_dir():
        raise RepairableError(f"{rel!r} is a folder in skill {skill.name!r}; its files: {_listing(target)}")
    if not target.is_file():
        raise RepairableError(f"skill {skill.name!r} has no file {rel!r}; its files: {_listing(folder)}")
    return target


def _listing(folder: Path, limit: int = 30) -> str:
    names: list[str] = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if len(names) >= limit:
                    names.append("...")
                    break
                names.append(entry.name + ("/" if is_dir_entry(entry) else ""))
    except OSError:
        return "(unreadable)"
    return ", ".join(sorted(names)) or "(none)"
