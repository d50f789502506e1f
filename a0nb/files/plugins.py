"""Plugins: folders with `plugin.yaml` (notebook `plugins/`, `$A0NB_HOME/plugins/`, pip entry points
in group `a0nb.plugins`, bundled `plugins/`), scoped `.toggle-0/1` switches and scoped config."""
from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import yaml

from a0nb import safe_yaml
from a0nb.atomic_io import write_text
from a0nb.diagnostics import Diagnostics
from a0nb.files.pip_plugins import ENTRY_POINT_GROUP, pip_plugins
from a0nb.files.prompt_lookup import RACY_NS
from a0nb.resources import distributions_only_on_sys_path

if TYPE_CHECKING:
    from importlib import metadata

NAME_RE = re.compile(r"^[a-z0-9_]+$")
META = "plugin.yaml"


@dataclass(frozen=True)
class Plugin:
    name: str
    path: Path
    source: str  # "notebook", "user", "entry point <dist>", "bundled"
    title: str = ""
    description: str = ""
    version: str = ""
    per_project_config: bool = True
    per_agent_config: bool = True
    always_enabled: bool = False
    default_enabled: bool = True
    meta: Mapping[str, Any] = field(default_factory=dict)


def read_manifest(folder: Path, source: str, diagnostics: Diagnostics) -> Plugin | None:
    meta_path = folder / META
    try:
        data = safe_yaml.load(meta_path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        diagnostics.add("error", "plugin", f"invalid YAML: {getattr(exc, 'problem', exc)}", meta_path,
                        mark.line + 1 if mark else None, fix="fix the YAML; the plugin is skipped until then")
        return None
    except (OSError, UnicodeDecodeError) as exc:
        diagnostics.add("error", "plugin", f"unreadable: {exc}", meta_path)
        return None
    if not isinstance(data, dict):
        diagnostics.add("error", "plugin", "plugin.yaml must be a mapping of fields", meta_path,
                        fix="write `name: <folder name>` and optional title/description")
        return None
    name = str(data.get("name") or folder.name)
    if name != Path(name).name or name in (".", "..") or name.startswith(".") or "\\" in name:
        # the name becomes a folder under .a0proj/plugins/ and $A0NB_HOME/plugins/: never a path out of them
        diagnostics.add("error", "plugin", f"plugin name {name!r} is not a plain folder name; the plugin is skipped",
                        meta_path, fix=f"write `name: {folder.name}` (letters, digits and _)")
        return None
    if not NAME_RE.match(name):
        diagnostics.add("warning", "plugin", f"plugin name {name!r} should match ^[a-z0-9_]+$", meta_path)
    if name != folder.name:
        diagnostics.add("info", "plugin", f"plugin name {name!r} differs from its folder {folder.name!r}", meta_path)
    return Plugin(
        name=name, path=folder, source=source,
        title=str(data.get("title") or name), description=str(data.get("description") or ""),
        version=str(data.get("version") or ""),
        per_project_config=bool(data.get("per_project_config", True)),
        per_agent_config=bool(data.get("per_agent_config", True)),
        always_enabled=bool(data.get("always_enabled", False)),
        default_enabled=bool(data.get("default_enabled", True)),
        meta=data,
    )


def _folders(base: Path) -> list[Path]:
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".") and (p / META).is_file())


class _EntryPoints:
    """The entry points of group `a0nb.plugins`, read again only when a folder on sys.path changed: installing,
    upgrading or removing a distribution adds or removes a folder there, which changes its mtime (the rule of
    files/pip_plugins). A process-wide cache, not state (every Agent's hierarchy reads it: a scan of every
    installed distribution's metadata, about two thirds of a new Agent's time). A folder changed in the last
    RACY_NS, or a finder of distributions that may look outside sys.path, means reading every time. The scan
    (and importlib.metadata's import) happens only when files/pip_plugins finds the group named in some
    distribution's entry_points.txt, or cannot tell: in a fresh process with its answer on disk, none."""

    def __init__(self) -> None:
        self._seen: tuple[Any, list[metadata.EntryPoint]] | None = None

    def get(self) -> list[metadata.EntryPoint]:
        key = self._key()
        if key is not None and self._seen is not None and self._seen[0] == key:
            return self._seen[1]
        if pip_plugins():  # (some entry_points.txt names the group, or it cannot tell)
            from importlib import metadata  # (only then: its import alone is about 40 ms)
            eps = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
        else:
            eps = []
        self._seen = (key, eps) if key is not None else None
        return eps

    @staticmethod
    def _key() -> tuple[Any, ...] | None:
        if not distributions_only_on_sys_path():
            return None
        now = time.time_ns()
        key: list[tuple[Any, ...]] = []
        for entry in sys.path:
            folder = os.path.abspath(entry or ".")
            try:
                st = os.stat(folder)
            except OSError:
                key.append((folder,))  # (importlib.metadata skips a missing entry too; it may appear later)
                continue
            if now - st.st_mtime_ns <= RACY_NS:
                return None
            key.append((folder, st.st_ino, st.st_mtime_ns))
        return tuple(key)


ENTRY_POINTS = _EntryPoints()


def _entry_point_folders(diagnostics: Diagnostics) -> list[tuple[Path, str]]:
    """pip-installed plugins: an entry point in group `a0nb.plugins` naming a package whose folder holds plugin.yaml."""
    out: list[tuple[Path, str]] = []
    try:
        eps = ENTRY_POINTS.get()
    except Exception as exc:  # broken metadata of some other distribution
        diagnostics.add("warning", "plugin", f"entry points unreadable: {exc}")
        return out
    for ep in eps:
        try:
            import importlib.util
            spec = importlib.util.find_spec(ep.value.split(":")[0])
            locs = list(spec.submodule_search_locations or []) if spec else []
            folder = Path(locs[0]) if locs else (Path(spec.origin).parent if spec and spec.origin else None)
        except (ImportError, ValueError) as exc:
            diagnostics.add("error", "plugin", f"entry point {ep.name} = {ep.value}: {exc}")
            continue
        if folder is None or not (folder / META).is_file():
            diagnostics.add("error", "plugin", f"entry point {ep.name} = {ep.value} has no {META} in its package folder")
            continue
        dist = getattr(getattr(ep, "dist", None), "name", "?")
        out.append((folder, f"entry point {dist}"))
    return out


def discover_plugins(notebook: Path, home: Path, bundled: Path, diagnostics: Diagnostics,
                     *, entry_points: bool = True) -> list[Plugin]:
    """All plugins in priority order; the same name in a lower place is shadowed (and reported)."""
    candidates: list[tuple[Path, str]] = []
    candidates += [(f, "notebook") for f in _folders(notebook / "plugins")]
    candidates += [(f, "user") for f in _folders(home / "plugins")]
    if entry_points:
        candidates += _entry_point_folders(diagnostics)
    candidates += [(f, "bundled") for f in _folders(bundled / "plugins")]
    found: dict[str, Plugin] = {}
    for folder, source in candidates:
        plugin = read_manifest(folder, source, diagnostics)
        if plugin is None:
            continue
        if plugin.name in found:
            diagnostics.add("info", "plugin", f"plugin {plugin.name!r} shadowed by {found[plugin.name].path}", folder)
            continue
        found[plugin.name] = plugin
    return list(found.values())


def toggle_dirs(plugin: Plugin, notebook: Path, home: Path, profile: str) -> list[Path]:
    """Where toggle files and config.json may live, LOWEST priority first (Agent Zero's order)."""
    dirs = [plugin.path, home / "plugins" / plugin.name]
    if plugin.per_agent_config:
        dirs += [home / "agents" / profile / "plugins" / plugin.name, notebook / "agents" / profile / "plugins" / plugin.name]
    if plugin.per_project_config:
        dirs.append(notebook / ".a0proj" / "plugins" / plugin.name)
        if plugin.per_agent_config:
            dirs.append(notebook / ".a0proj" / "agents" / profile / "plugins" / plugin.name)
    return dirs


def is_enabled(plugin: Plugin, notebook: Path, home: Path, profile: str) -> bool:
    if plugin.always_enabled:
        return True
    on = plugin.default_enabled
    for d in toggle_dirs(plugin, notebook, home, profile):
        if on and (d / ".toggle-0").exists():
            on = False
        elif not on and (d / ".toggle-1").exists():
            on = True
    return on


def plugin_config(plugin: Plugin, notebook: Path, home: Path, profile: str, diagnostics: Diagnostics) -> dict[str, Any]:
    """The highest-priority scoped `config.json` as it is, else `default_config.yaml` (Agent Zero's rule: a
    config.json replaces the defaults, it is not merged onto them)."""
    config: dict[str, Any] = {}
    for d in reversed(toggle_dirs(plugin, notebook, home, profile)):
        cfg = d / "config.json"
        if cfg.is_file():
            try:
                return dict(json.loads(cfg.read_text(encoding="utf-8")))
            except (ValueError, OSError, TypeError) as exc:
                diagnostics.add("error", "plugin", f"config.json unreadable: {exc}; the defaults apply", cfg,
                                fix="fix the JSON or delete the file to use the defaults")
            break
    default = plugin.path / "default_config.yaml"
    if default.is_file():
        try:
            config = dict(safe_yaml.load(default.read_text(encoding="utf-8")) or {})
        except (yaml.YAMLError, OSError, UnicodeDecodeError, TypeError, ValueError) as exc:
            diagnostics.add("error", "plugin", f"default config unreadable: {exc}", default)
    return config


def save_plugin_config(plugin: Plugin, notebook: Path, values: Mapping[str, Any], profile: str | None = None) -> Path:
    """Write a notebook-scoped config.json (the `config` UI element writes through this)."""
    base = notebook / ".a0proj"
    folder = (base / "agents" / profile if profile else base) / "plugins" / plugin.name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    write_text(path, json.dumps(dict(values), indent=2, ensure_ascii=False) + "\n", "plugin config")
    return path


def enabled_plugin_dirs(plugins: Sequence[Plugin], notebook: Path, home: Path, profile: str) -> list[tuple[str, Path]]:
    return [(p.name, p.path) for p in plugins if is_enabled(p, notebook, home, profile)]
