"""Agent profiles: `agents/<name>/agent.yaml` folders found along the search hierarchy, their
definitions merged across roots (higher priority wins field by field)."""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from a0nb.diagnostics import Diagnostics
from a0nb.files.roots import Root

__all__ = ["Profile", "agents_dirs", "discover_profiles", "unknown_profile_message"]

TEXT_FIELDS = ("title", "description", "context")
KNOWN_KEYS = {*TEXT_FIELDS, "name", "enabled"}
DEFINITION_FILES = ("agent.yaml", "agent.yml", "agent.json")
PROFILE_PARTS = ("prompts", "tools", "extensions", "skills", "plugins", "settings.json", "_context.md")


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    description: str
    context: str  # what a superior agent reads when choosing a subordinate
    path: Path | None  # the highest-priority folder defining it
    root_label: str
    enabled: bool = True


@dataclass(frozen=True)
class _Definition:
    """One root's view of a profile, before merging."""

    name: str
    label: str
    path: Path
    fields: dict[str, str]
    enabled: bool | None


def agents_dirs(roots: Iterable[Root]) -> list[tuple[str, Path]]:
    """The `agents/` folder of every non-profile root, in priority order (NB/.a0proj, NB, HOME,
    plugins, bundled) — the argument `discover_profiles` expects."""
    return [(r.label, r.path / "agents") for r in roots if not r.kind.endswith("-profile")]


def discover_profiles(agents_dirs: Sequence[tuple[str, Path]], diagnostics: Diagnostics) -> dict[str, Profile]:
    """Every profile under the given `(label, agents/)` folders, highest priority first, by name."""
    found: dict[str, list[_Definition]] = {}
    for label, folder in agents_dirs:
        for sub in _profile_folders(Path(folder)):
            definition = _read_definition(label, sub, diagnostics)
            if definition is not None:
                found.setdefault(definition.name, []).append(definition)
    return {name: _merge(name, found[name]) for name in sorted(found)}


def unknown_profile_message(name: str, available: Iterable[str]) -> str:
    names = sorted(set(available))
    text = f"Unknown profile {name!r}."
    close = difflib.get_close_matches(name, names, n=1)
    if close:
        text += f" Did you mean {close[0]!r}?"
    if names:
        return text + f" Available profiles: {', '.join(names)}."
    return text + " No profiles are available; create agents/<name>/agent.yaml next to the notebook."


def _profile_folders(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "__")))


def _merge(name: str, definitions: list[_Definition]) -> Profile:
    def first(key: str) -> str:
        return next((d.fields[key] for d in definitions if d.fields.get(key)), "")

    enabled = next((d.enabled for d in definitions if d.enabled is not None), True)
    top = definitions[0]
    return Profile(name, first("title") or name, first("description"), first("context"),
                   top.path, top.label, enabled)


def _read_definition(label: str, folder: Path, diagnostics: Diagnostics) -> _Definition | None:
    file = next((folder / f for f in DEFINITION_FILES if (folder / f).is_file()), None)
    if file is None and not _bare_profile(folder, diagnostics):
        return None
    data = {} if file is None else _parse(file, diagnostics)
    if data is None:
        return None
    fields, enabled = _fields(data, file or folder, folder.name, diagnostics)
    if not fields.get("context"):
        fields["context"] = _legacy_context(folder / "_context.md")
    return _Definition(folder.name, label, folder, fields, enabled)


def _bare_profile(folder: Path, diagnostics: Diagnostics) -> bool:
    """A folder without agent.yaml is still a profile when it holds profile parts (prompts/, ...)."""
    fix = "add agent.yaml with title, description and context"
    if any((folder / part).exists() for part in PROFILE_PARTS):
        diagnostics.add("info", "profile", "no agent.yaml; the folder name is used as the title", folder, fix=fix)
        return True
    diagnostics.add("info", "profile", "folder has no agent.yaml and no prompts/ tools/ extensions/ "
                    "skills/: not a profile", folder, fix=fix)
    return False


class _SyntaxProblem(Exception):
    def __init__(self, kind: str, message: str, line: int | None) -> None:
        super().__init__(message)
        self.kind, self.message, self.line = kind, message, line


def _parse(file: Path, diagnostics: Diagnostics) -> dict[str, Any] | None:
    """The mapping in agent.yaml / agent.json, or None (with a diagnostic) when unusable."""
    try:
        text = file.read_text(encoding="utf-8-sig")
        data = _load_json(text) if file.suffix == ".json" else _load_yaml(text)
    except (OSError, UnicodeDecodeError) as exc:
        diagnostics.add("error", "profile", f"cannot read profile definition: {exc}", file)
        return None
    except _SyntaxProblem as exc:
        diagnostics.add("error", "profile", f"invalid {exc.kind}: {exc.message}; profile skipped", file,
                        exc.line, fix=f"fix the {exc.kind} syntax")
        return None
    if data is None:
        return {}
    if not isinstance(data, dict):
        diagnostics.add("error", "profile", "the definition must be a mapping; profile skipped", file,
                        fix="write title:, description: and context: keys")
        return None
    return data


def _load_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _SyntaxProblem("JSON", exc.msg, exc.lineno) from exc


def _load_yaml(text: str) -> Any:
    import yaml  # deferred: importing a0nb stays cheap

    from a0nb import safe_yaml

    try:
        return safe_yaml.load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise _SyntaxProblem("YAML", problem, None if mark is None else mark.line + 1) from exc


def _fields(data: dict[str, Any], file: Path, folder_name: str,
            diagnostics: Diagnostics) -> tuple[dict[str, str], bool | None]:
    fields: dict[str, str] = {}
    for key in TEXT_FIELDS:
        value = data.get(key)
        if isinstance(value, str):
            fields[key] = value.strip()
        elif value is not None:
            diagnostics.add("warning", "profile", f"{key!r} must be text; ignored", file)
    name = data.get("name")
    if name is not None and name != folder_name:
        diagnostics.add("warning", "profile", f"name {name!r} differs from the folder name; "
                        f"the profile is called {folder_name!r}", file, fix="rename the folder or drop name:")
    enabled = data.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        diagnostics.add("warning", "profile", "'enabled' must be true or false; ignored", file)
        enabled = None
    unknown = sorted(str(k) for k in data if k not in KNOWN_KEYS)
    if unknown:
        diagnostics.add("info", "profile", f"keys not used by a0nb: {', '.join(unknown)}", file)
    return fields, enabled


def _legacy_context(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip() if path.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return ""
