"""Skills: parsing and validating SKILL.md files, discovering them across roots (cached), searching
them, the text the model sees on load, and safe reads of files inside a skill's folder."""
from __future__ import annotations

import codecs
import os
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from a0nb.diagnostics import Diagnostics
from a0nb.errors import RepairableError
from a0nb.files.file_tree import file_tree

__all__ = [
    "Skill", "SkillIndex", "discover_skills", "normalise_name", "parse_skill", "read_skill_file",
    "search_skills", "skill_text", "SKILL_FILE", "SKILL_TREE_IGNORE",
]

SKILL_FILE = "SKILL.md"
# Clutter a model never needs to see in a skill's folder.
SKILL_TREE_IGNORE = "__pycache__/\n*.pyc\n.DS_Store\nnode_modules/\n.venv/\n*.egg-info/\n"

_NAME_RE = re.compile(r"^[a-z0-9-]+$")
_MAX_NAME, _MAX_DESCRIPTION, _MAX_COMPATIBILITY = 64, 1024, 500
_MAX_SKILL_BYTES = 1_000_000
_ALIASES: dict[str, tuple[str, ...]] = {
    "name": ("name", "skill"),
    "description": ("description", "when_to_use", "summary"),
    "tags": ("tags", "tag"),
    "triggers": ("triggers", "trigger_patterns", "trigger", "activation"),
    "allowed_tools": ("allowed-tools", "allowed_tools", "tools"),
}


@dataclass(frozen=True)
class Skill:
    """One valid skill. `name` is as written in the frontmatter; lookups use `normalise_name`."""

    name: str
    description: str
    path: Path
    folder: Path
    root_label: str
    version: str = ""
    author: str = ""
    license: str = ""
    compatibility: str = ""
    tags: tuple[str, ...] = ()
    triggers: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    body: str = ""


def normalise_name(name: str) -> str:
    """The key skills are de-duplicated and looked up by: lower-case, whitespace runs as `-`."""
    return re.sub(r"\s+", "-", name.strip().lower())


# ---------------------------------------------------------------- parsing and validation


def parse_skill(path: Path, root_label: str, diagnostics: Diagnostics) -> Skill | None:
    """The skill in `path` (a SKILL.md), or None with one diagnostic per problem found."""
    path = Path(path)
    text = _read_skill_text(path, diagnostics)
    if text is None:
        return None
    split = _split_frontmatter(text, path, diagnostics)
    if split is None:
        return None
    front, first_line, body = split
    data = _load_yaml(front, first_line, path, diagnostics)
    if data is None:
        return None
    return _build(data, body, path, root_label, diagnostics)


def _bad(diagnostics: Diagnostics, path: Path, message: str, fix: str, line: int | None = None) -> None:
    diagnostics.add("error", "skill", f"skill not loaded: {message}", path, line, fix)


def _read_skill_text(path: Path, diagnostics: Diagnostics) -> str | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_MAX_SKILL_BYTES + 1)
    except OSError as exc:
        _bad(diagnostics, path, f"cannot read the file ({exc.strerror or exc})", "check the file's permissions")
        return None
    if len(raw) > _MAX_SKILL_BYTES:
        _bad(diagnostics, path, f"larger than {_MAX_SKILL_BYTES} bytes", "move long material into other files")
        return None
    if b"\x00" in raw:
        _bad(diagnostics, path, "binary content (NUL bytes)", "SKILL.md must be UTF-8 text")
        return None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        _bad(diagnostics, path, f"not UTF-8 text (byte {exc.start})", "save the file as UTF-8")
        return None


def _split_frontmatter(text: str, path: Path, diagnostics: Diagnostics) -> tuple[str, int, str] | None:
    """(frontmatter text, 1-based line of its first line, body)."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if start is None or lines[start].rstrip() != "---":
        line = None if start is None else start + 1
        _bad(diagnostics, path, "no frontmatter: the first non-blank line must be `---`", (
            "start the file with `---`, then `name:` and `description:` lines, then `---`"), line)
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        _bad(diagnostics, path, "frontmatter opened with `---` but never closed",
             "add a `---` line after the frontmatter", start + 1)
        return None
    return "\n".join(lines[start + 1:end]), start + 2, "\n".join(lines[end + 1:]).strip()


def _load_yaml(front: str, first_line: int, path: Path, diagnostics: Diagnostics) -> dict[str, Any] | None:
    import yaml  # cheap, but only needed once skills are read

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when installed
    try:
        data = yaml.load(front, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + mark.line if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        rescued = _simple_fields(front)
        if rescued is not None:
            # Agent Zero also falls back to a plain `key: value` reader; we do too, but say so.
            diagnostics.add("warning", "skill", f"invalid YAML in frontmatter ({problem}); read it as plain "
                            "`key: value` lines", path, line, "quote values that contain `: ` or `#`")
            return rescued
        _bad(diagnostics, path, f"invalid YAML in frontmatter: {problem}", "fix the YAML syntax", line)
        return None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        _bad(diagnostics, path, f"frontmatter is a YAML {type(data).__name__}, not a mapping",
             "write `key: value` lines", first_line)
        return None
    return data


def _simple_fields(front: str) -> dict[str, Any] | None:
    """`key: value` lines and `- item` lists; None unless it yields a name and a description."""
    data: dict[str, Any] = {}
    key = None
    for line in front.splitlines():
        item = re.match(r"^\s+-\s+(.*)$", line)
        if item and key is not None and isinstance(data.get(key), list):
            data[key].append(_unquote(item.group(1)))
            continue
        pair = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
        if pair:
            key, value = pair.group(1), pair.group(2).strip()
            data[key] = _unquote(value) if value else []
    return data if _pick(data, "name") and _pick(data, "description") else None


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _pick(data: Mapping[str, Any], field_: str) -> Any:
    for alias in _ALIASES.get(field_, (field_,)):
        if data.get(alias) not in (None, "", []):
            return data[alias]
    return None


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _as_list(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple, set)):
        return tuple(s for s in (_text(v).strip() for v in value) if s)
    return tuple(s for s in re.split(r"[,\s]+", _text(value)) if s)


def _build(data: Mapping[str, Any], body: str, path: Path, root_label: str, diagnostics: Diagnostics) -> Skill | None:
    problems = _problems(data)
    for message, fix in problems:
        _bad(diagnostics, path, message, fix)
    if problems:
        return None
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        diagnostics.add("warning", "skill", "`metadata` is not a mapping; ignored", path,
                        fix="write `metadata:` followed by indented `key: value` lines")
        metadata = None
    return Skill(
        name=_text(_pick(data, "name")).strip(),
        description=_text(_pick(data, "description")).strip(),
        path=path,
        folder=path.parent,
        root_label=root_label,
        version=_text(data.get("version")).strip(),
        author=_text(data.get("author")).strip(),
        license=_text(data.get("license")).strip(),
        compatibility=_text(data.get("compatibility")).strip(),
        tags=_as_list(_pick(data, "tags")),
        triggers=_as_list(_pick(data, "triggers")),
        allowed_tools=_as_list(_pick(data, "allowed_tools")),
        metadata=MappingProxyType(dict(metadata or {})),
        body=body,
    )


def _problems(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every rule the frontmatter breaks, as (message, fix)."""
    out: list[tuple[str, str]] = []
    raw_name = _pick(data, "name")
    name = _text(raw_name).strip()
    if isinstance(raw_name, (dict, list)):
        out.append(("`name` must be text", "write `name: my-skill`"))
    elif not name:
        out.append(("`name` is missing", "add `name: my-skill` (lower-case letters, digits, hyphens)"))
    elif len(name) > _MAX_NAME:
        out.append((f"`name` is {len(name)} characters, more than {_MAX_NAME}", "use a shorter name"))
    elif not _NAME_RE.match(name):
        out.append((f"`name` {name!r} may only hold lower-case letters, digits and hyphens",
                    f"rename it, e.g. {_suggest(name)!r}"))
    elif name.startswith("-") or name.endswith("-"):
        out.append((f"`name` {name!r} starts or ends with a hyphen", f"rename it to {name.strip('-')!r}"))
    elif "--" in name:
        out.append((f"`name` {name!r} contains `--`", f"rename it to {re.sub('-{2,}', '-', name)!r}"))
    description = _text(_pick(data, "description")).strip()
    if not description:
        out.append(("`description` is missing", "add `description:` saying what the skill does and when to use it"))
    elif len(description) > _MAX_DESCRIPTION:
        out.append((f"`description` is {len(description)} characters, more than {_MAX_DESCRIPTION}",
                    "shorten it; put details in the body"))
    compatibility = _text(data.get("compatibility")).strip()
    if len(compatibility) > _MAX_COMPATIBILITY:
        out.append((f"`compatibility` is {len(compatibility)} characters, more than {_MAX_COMPATIBILITY}",
                    "shorten it"))
    return out


def _suggest(name: str) -> str:
    slug = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9]+", "-", name.lower())).strip("-")
    return slug[:_MAX_NAME] or "my-skill"


# ---------------------------------------------------------------- discovery


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
                    if not entry.name.startswith(".") and _is_dir(entry):
                        queue.append(entry.path)
        except OSError:
            continue
    walk.files.sort()
    return walk


def _is_dir(entry: os.DirEntry[str]) -> bool:
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


# ---------------------------------------------------------------- search, load text, file reads


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
                names.append(entry.name + ("/" if _is_dir(entry) else ""))
    except OSError:
        return "(unreadable)"
    return ", ".join(sorted(names)) or "(none)"
