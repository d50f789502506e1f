"""Skill parsing: a SKILL.md's frontmatter read (YAML, or plain `key: value` lines as a fallback)
and validated into a `Skill`, with one diagnostic per broken rule naming the fix."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from a0nb.diagnostics import Diagnostics

__all__ = ["Skill", "normalise_name", "parse_skill", "SKILL_FILE", "SKILL_TREE_IGNORE"]

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

    from a0nb import safe_yaml
    try:
        data = safe_yaml.load(front)  # libyaml when installed; size and alias limits
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
