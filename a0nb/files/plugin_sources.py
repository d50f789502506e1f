"""The setting `plugin_sources`: Crystal Lattice plugin classes from dotted names, local folders (`path:`, with an
optional `agent_plugin.json` descriptor) and git repositories (`git+https://...#ref`, installed with
`pip install --target <cache>` only when remote installs are explicitly allowed). Returns the classes found."""
from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable
from urllib.parse import urlparse

from a0nb.diagnostics import Diagnostics
from a0nb.folder_trust import how_to_trust, is_trusted
from a0nb.files.import_aliases import AliasFinder, AliasScope
from a0nb.files.source_import import source_root
from a0nb.resources import litellm_import_defaults

ALLOW_ENV = "A0NB_ALLOW_REMOTE_PLUGINS"   # remote installs: off unless the user's environment says 1/true
HOSTS_ENV = "A0NB_PLUGIN_HOSTS"           # comma-separated allowlist (default github.com; `file` = file:// URLs)
DESCRIPTOR = "agent_plugin.json"


class SourceError(ValueError):
    """A plugin source that cannot be loaded; the message says which source, which file and the fix."""


@dataclass(frozen=True)
class Found:
    cls: type
    source: str       # the source as configured
    origin: str       # the file (or descriptor) it came from


def remote_allowed(env: dict[str, str] | None = None) -> tuple[bool, list[str]]:
    env = dict(os.environ) if env is None else env
    allowed = env.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes", "on")
    hosts = [h.strip().lower() for h in env.get(HOSTS_ENV, "github.com").split(",") if h.strip()]
    return allowed, hosts


def load_sources(sources: Iterable[Any], workdir: Path, cache: Path, diagnostics: Diagnostics) -> list[Found]:
    """Every class the sources name or hold; a bad source is a diagnostic (area `plugin-source`), the rest load."""
    out: list[Found] = []
    for source in sources or ():
        try:
            out += _load(source, workdir, cache)
        except SourceError as exc:
            diagnostics.add("error", "plugin-source", str(exc), None, fix="fix the entry in the setting plugin_sources")
    return out


def _load(source: Any, workdir: Path, cache: Path) -> list[Found]:
    label = json.dumps(source) if not isinstance(source, str) else source
    if isinstance(source, dict):
        entry = source.get("entry")
        if "git" in source:
            folder = _install_git(str(source["git"]), source.get("ref"), cache, label)
        elif "path" in source:
            folder = _folder(str(source["path"]), workdir, label)
        else:
            raise SourceError(f"plugin source {label}: a mapping needs `path` or `git` (and optionally `entry`)")
        return _from_folder(folder, label, [str(entry)] if entry else None)
    if not isinstance(source, str) or not source.strip():
        raise SourceError(f"plugin source {label!r}: use a dotted class, \"path:DIR\", \"git+URL#REF\" or a mapping")
    text = source.strip()
    if text.startswith("path:"):
        return _from_folder(_folder(text[5:], workdir, label), label, None)
    if text.startswith("git+"):
        url, _, ref = text[4:].partition("#")
        return _from_folder(_install_git(url, ref or None, cache, label), label, None)
    return [Found(_dotted_class(text, None, label), label, text)]


def _folder(path: str, workdir: Path, label: str) -> Path:
    folder = (workdir / path).resolve() if not Path(path).is_absolute() else Path(path)
    if not folder.is_dir():
        raise SourceError(f"plugin source {label}: {folder} is not a folder")
    return folder


def _from_folder(folder: Path, label: str, entries: list[str] | None) -> list[Found]:
    """`agent_plugin.json` limits loading to its `entries` (in `subdirectory`); without one, every plugin class
    defined in the folder's top-level modules and packages."""
    descriptor = folder / DESCRIPTOR
    root = folder
    if descriptor.is_file():
        try:
            data = json.loads(descriptor.read_text(encoding="utf-8"))
        except (ValueError, OSError) as exc:
            raise SourceError(f"plugin source {label}: {descriptor} is not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise SourceError(f"plugin source {label}: {descriptor} must be an object with `entries`")
        root = (folder / str(data.get("subdirectory") or ".")).resolve()
        if entries is None and data.get("entries"):
            entries = [str(e) for e in data["entries"]]
    origin = str(descriptor) if descriptor.is_file() else str(folder)
    if not is_trusted(root):
        raise SourceError(f"plugin source {label}: {root} is not a trusted folder, nothing of it is imported; "
                          + how_to_trust(root))
    if entries is not None:
        return [Found(_dotted_class(e, root, label, origin), label, origin) for e in entries]
    found = []
    for module in _modules(root):
        mod = _import(module, root, label, origin)
        found += [Found(c, label, str(getattr(mod, "__file__", origin))) for c in _plugin_classes(mod)]
    return found


def _modules(root: Path) -> list[str]:
    names = [p.stem for p in sorted(root.glob("*.py")) if p.stem not in ("setup", "conftest") and not p.stem.startswith("test")]
    for pkg in sorted(d for d in root.iterdir() if (d / "__init__.py").is_file()):
        names += [f"{pkg.name}.{p.stem}" for p in sorted(pkg.glob("*.py")) if p.stem != "__init__"]
    return names


def _plugin_classes(module: ModuleType) -> list[type]:
    marks = ("init", "call_api", "stream_api", "process_chunk", "finalize", "execute_tool")
    return [c for _, c in inspect.getmembers(module, inspect.isclass)
            if c.__module__ == module.__name__ and any(m in vars(c) for m in marks)]


def _import(dotted: str, root: Path | None, label: str, origin: str = "") -> ModuleType:
    """Import `dotted` from `root` (found with the path finder there, never by editing sys.path), or from the
    normal import path when `root` is None."""
    try:
        with AliasScope(AliasFinder()):  # `from agent_core.types import ...` in a Crystal Lattice package
            return _import_now(dotted, root)
    except Exception as exc:
        where = f" (listed in {origin})" if origin.endswith(DESCRIPTOR) else ""
        raise SourceError(f"plugin source {label}: {dotted}{where} does not import: {type(exc).__name__}: {exc}") from None


def _import_now(dotted: str, root: Path | None) -> ModuleType:
    litellm_import_defaults()  # (the plugin's modules may import litellm, which would go to the network and print)
    if root is None:
        return importlib.import_module(dotted)
    top = dotted.split(".")[0]
    if top not in sys.modules or not str(getattr(sys.modules[top], "__file__", "")).startswith(str(root)):
        source_root(root)  # (its modules, and those its packages import, from source: never bytecode)
        spec = importlib.machinery.PathFinder.find_spec(top, [str(root)])
        if spec is None or (spec.loader is None and not spec.submodule_search_locations):
            raise ModuleNotFoundError(f"no module named {top!r} in {root}")
        module = importlib.util.module_from_spec(spec)  # (a folder without __init__.py: a namespace package)
        sys.modules[top] = module
        if spec.loader is not None:
            spec.loader.exec_module(module)
    return importlib.import_module(dotted)


def _dotted_class(dotted: str, root: Path | None, label: str, origin: str = "") -> type:
    module_name, _, name = dotted.rpartition(".")
    if not module_name:
        raise SourceError(f"plugin source {label}: {dotted!r} is not a dotted class name (package.module.Class)")
    module = _import(module_name, root, label, origin)
    cls = getattr(module, name, None)
    if not isinstance(cls, type):
        where = f" listed in {origin}" if origin.endswith(DESCRIPTOR) else ""
        raise SourceError(f"plugin source {label}: {dotted}{where} does not exist (module {module_name} has no class {name})")
    return cls


def _install_git(url: str, ref: str | None, cache: Path, label: str) -> Path:
    allowed, hosts = remote_allowed()
    if not allowed:
        raise SourceError(f"plugin source {label}: remote plugin installs are off. Set the environment variable "
                          f"{ALLOW_ENV}=1 to allow them (hosts: {HOSTS_ENV}, default github.com)")
    parsed = urlparse(url)
    host = "file" if parsed.scheme == "file" else (parsed.hostname or "").lower()
    if host not in hosts:
        raise SourceError(f"plugin source {label}: host {host or parsed.scheme!r} is not in {HOSTS_ENV} "
                          f"({', '.join(hosts) or 'empty'}); add it there to install from it")
    if not ref:
        raise SourceError(f"plugin source {label}: pin a ref (git+URL#v1.0.0, or \"ref\" in the mapping); "
                          "unpinned remote code is refused")
    target = cache / hashlib.sha256(f"{url}#{ref}".encode()).hexdigest()[:16]
    if (target / ".a0nb-installed").is_file():
        return target
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
           "--disable-pip-version-check", "--target", str(target), f"git+{url}@{ref}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise SourceError(f"plugin source {label}: pip install failed: {done.stderr.strip()[-800:]}")
    (target / ".a0nb-installed").write_text(f"{url}#{ref}\n")
    return target


__all__ = ["load_sources", "Found", "SourceError", "remote_allowed", "ALLOW_ENV", "HOSTS_ENV"]
