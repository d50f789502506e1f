"""What an untrusted folder would run: its extensions, tools, providers, plugins' code, prompt variables
loaders and model endpoints — listed in one message (a warning and one `trust` diagnostic); nothing of it
is imported (the loaders ask `folder_trust.is_trusted` before importing a file)."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Iterable

from a0nb.diagnostics import Diagnostics
from a0nb.files.roots import Root
from a0nb.folder_trust import GUARDED_SETTINGS, UntrustedFolderWarning, how_to_trust, is_trusted
from a0nb.settings import from_file

_CODE_DIRS = (("extensions", "extension"), ("tools", "tool"), ("providers", "model provider"),
              ("prompts", "prompt variables loader"), ("features", "feature"))
_SETTINGS_FILES = ("settings.yaml", "plugins/_model_config/config.json")


def _py_files(folder: Path, recursive: bool) -> list[Path]:
    if not folder.is_dir():
        return []
    found = folder.rglob("*.py") if recursive else folder.glob("*.py")
    return sorted(p for p in found if "__pycache__" not in p.parts)


def _root_content(root: Root) -> list[tuple[Path, str]]:
    out: list[tuple[Path, str]] = []
    if root.kind == "plugin":
        what = f"plugin {root.plugin}"
        return [(p, what) for p in _py_files(root.path, True)]
    for sub, what in _CODE_DIRS:
        out += [(p, what) for p in _py_files(root.path / sub, sub == "extensions")]
    for name in _SETTINGS_FILES:
        path = root.path / name
        if path.is_file():
            values = from_file(path, Diagnostics())
            guarded = [f"{k}={values[k]!r}" for k in GUARDED_SETTINGS if k in values]
            if guarded:
                out.append((path, "settings " + ", ".join(guarded)))
    return out


def untrusted_content(roots: Iterable[Root], workdir: Path) -> dict[Path, list[tuple[Path, str]]]:
    """{untrusted folder: [(file, what it is)]} — a root inside the notebook folder counts under it."""
    out: dict[Path, list[tuple[Path, str]]] = {}
    workdir_trusted = is_trusted(workdir)
    for root in roots:
        if root.kind.startswith("bundled") or not root.path.is_dir():
            continue
        inside = root.path == workdir or workdir in root.path.parents
        if (workdir_trusted if inside else is_trusted(root.path)):
            continue
        content = _root_content(root)
        if content:
            out.setdefault(workdir if inside else root.path, []).extend(content)
    return out


def message(found: dict[Path, list[tuple[Path, str]]]) -> str:
    parts = []
    for folder, items in found.items():
        lines = [f"a0nb did not run anything from {folder}: the folder is not trusted. It holds:"]
        seen: set[Path] = set()
        for path, what in items:
            if path in seen:
                continue
            seen.add(path)
            try:
                shown = path.relative_to(folder)
            except ValueError:
                shown = path
            lines.append(f"  - {shown}  ({what})")
        lines.append(how_to_trust(folder) + ".")
        parts.append("\n".join(lines))
    return "\n".join(parts)


# What this process last told the user about each untrusted folder: `%load_ext a0nb` (the app's extension points)
# and the agent each look at the folder, through hierarchies of their own; the same listing is warned once.
# Process-wide, as Python's own record of shown warnings is; a changed listing is told again.
_TOLD: dict[Path, str] = {}


def report(roots: Iterable[Root], workdir: Path, diagnostics: Diagnostics, last: str) -> str:
    """List untrusted content once: a `trust` diagnostic and, when the listing changed, one warning."""
    diagnostics.clear("trust")
    found = untrusted_content(roots, workdir)
    text = message(found)
    if text:
        folder = next(iter(found))
        diagnostics.add("warning", "trust", text, folder, fix=how_to_trust(folder))
        if text != last and _TOLD.get(folder) != text:
            _TOLD[folder] = text
            warnings.warn(text, UntrustedFolderWarning, stacklevel=4)
    return text
