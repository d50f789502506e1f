"""Agent settings and their layers: call argument > `%config A0.*` > `A0NB_*` environment >
`NB/.a0proj/plugins/_model_config/config.json` > profile `settings.yaml` > defaults."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, Mapping

import yaml

from a0nb import safe_yaml
from a0nb.diagnostics import Diagnostics
from a0nb.errors import ConfigError
from a0nb.folder_trust import GUARDED_SETTINGS, is_trusted

Approval = Literal["auto", "ask", "deny"]


@dataclass(frozen=True)
class Settings:
    model: str | None = None
    utility_model: str | None = None
    max_iterations: int = 25
    misformat_limit: int = 3
    ctx_length: int = 128_000
    history_share: float = 0.7
    utility_ctx_length: int = 32_000
    # model-written code runs only after a yes (a y/N prompt, or the front end's Allow/Deny); with nobody
    # to ask it is refused. `auto` runs everything: opt in with approval="auto" / A0NB_APPROVAL=auto
    approval: Approval = "ask"
    code_timeout: float = 60.0
    tool_timeout: float = 600.0
    output_cap: int = 20_000
    output_limit: int = 1_000_000  # characters of a run's output kept in memory (head + tail); the rest is counted
    extension_timeout: float = 60.0
    frozen_time: str | None = None
    retries: int = 2
    backoff: float = 1.5
    temperature: float | None = None
    api_base: str | None = None          # the chat model's; the utility model has its own (Agent Zero's way)
    api_key_env: str | None = None
    utility_api_base: str | None = None
    utility_api_key_env: str | None = None
    preset: str = ""
    cassette_mode: Literal["strict", "lax"] = "strict"
    # extra keyword arguments for the model call (Agent Zero's model `kwargs`): max_tokens, reasoning_effort,
    # litellm's mock_response, ... — never an API key (keys come from the environment)
    model_kwargs: dict[str, Any] | None = None
    utility_model_kwargs: dict[str, Any] | None = None
    native_tools: bool = False   # also send the tools as native function schemas (providers tagged `tools`)
    # memory (a0nb.engine.memory): "local" = the bundled offline embedder (a0nb[memory]), "hash" = the light
    # fallback, anything else a litellm embedding model id
    embedding_model: str = "local"
    memory_recall: bool = True
    memory_recall_interval: int = 3
    memory_recall_threshold: float = 0.7
    memory_memorize: bool = False    # Agent Zero memorises after every monologue (2 utility calls); opt-in here
    # MCP servers in Agent Zero's format: {"mcpServers": {"name": {"command", "args", "env", "url", "headers"}}}
    mcp_servers: dict[str, Any] | None = None
    mcp_timeout: float = 60.0
    # Crystal Lattice plugin sources: "pkg.mod.Class", "path:DIR", {"path", "entry"}, "git+URL#REF", {"git", "ref",
    # "entry"} (git only with A0NB_ALLOW_REMOTE_PLUGINS=1 in the environment)
    plugin_sources: list[Any] | None = None


_NAMES = frozenset(f.name for f in fields(Settings))
_BOOLS: Mapping[str, bool] = MappingProxyType({"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False})
_ENV: Mapping[str, str] = MappingProxyType({name: "A0NB_" + name.upper() for name in sorted(_NAMES)})


def _coerce(name: str, value: Any) -> Any:
    kind = {f.name: f.type for f in fields(Settings)}[name]
    if value is None or value == "":
        return None if "None" in str(kind) else value
    if "list" in str(kind):
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.strip().startswith("[") else [v.strip() for v in value.split(",") if v.strip()]
            except ValueError:
                raise ConfigError(f"{name} must be a JSON list (got {value!r})") from None
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{name} must be a list (got {type(value).__name__})")
        return list(value)
    if "dict" in str(kind):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                raise ConfigError(f"{name} must be a JSON object, like {{\"max_tokens\": 512}} (got {value!r})") from None
        if not isinstance(value, dict):
            raise ConfigError(f"{name} must be a mapping of keyword arguments (got {type(value).__name__})")
        return dict(value)
    if str(kind) == "bool" and not isinstance(value, bool):
        text = str(value).strip().lower()
        if text not in _BOOLS:
            raise ConfigError(f"{name} must be true or false (got {value!r})")
        return _BOOLS[text]
    if "int" in str(kind) and "float" not in str(kind) and not isinstance(value, int):
        return int(value)
    if "float" in str(kind) and not isinstance(value, (int, float)):
        return float(value)
    if name == "approval" and value not in ("auto", "ask", "deny"):
        raise ConfigError(f"approval must be auto, ask or deny (got {value!r})")
    return value


def from_env(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    env = os.environ if env is None else env
    return {name: _coerce(name, env[var]) for name, var in _ENV.items() if env.get(var, "") != ""}


def from_file(path: Path, diagnostics: Diagnostics) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else safe_yaml.load(text)
    except (ValueError, yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
        diagnostics.add("error", "settings", f"unreadable settings: {exc}", path, fix="fix the file or delete it")
        return {}
    if not isinstance(data, dict):
        diagnostics.add("error", "settings", "settings must be a mapping", path)
        return {}
    unknown = sorted(set(data) - _NAMES)
    if unknown:
        diagnostics.add("warning", "settings", f"unknown settings {', '.join(unknown)}", path,
                        fix=f"known settings: {', '.join(sorted(_NAMES))}")
    out = {}
    for k, v in data.items():
        if k in _NAMES:
            try:
                out[k] = _coerce(k, v)
            except (ValueError, TypeError, ConfigError) as exc:  # e.g. `retries: [1]`
                diagnostics.add("error", "settings", f"{k}: {exc}", path)
    return out


def folder_layer(path: Path, diagnostics: Diagnostics) -> dict[str, Any]:
    """A settings file's values; from a folder the user has not trusted, without the settings that choose where
    requests and keys go or what runs (folder_trust.GUARDED_SETTINGS; the trust message lists them)."""
    values = from_file(path, diagnostics)
    if values and not is_trusted(path):
        values = {k: v for k, v in values.items() if k not in GUARDED_SETTINGS}
    return values


def resolve(workdir: Path, profile_dirs: list[Path], diagnostics: Diagnostics, *,
            magic: Mapping[str, Any] | None = None, arguments: Mapping[str, Any] | None = None) -> Settings:
    """Merge the layers, lowest first."""
    merged: dict[str, Any] = {}
    files = [d / "settings.yaml" for d in reversed(profile_dirs)]  # lower-priority profile folders first
    for path in files + [workdir / ".a0proj" / "plugins" / "_model_config" / "config.json"]:
        merged.update(folder_layer(path, diagnostics))
    merged.update(from_env())
    for layer in (magic or {}, arguments or {}):
        merged.update({k: _coerce(k, v) for k, v in layer.items() if v is not None and k in _NAMES})
    return replace(Settings(), **merged)


def setting_names() -> list[str]:
    return sorted(_NAMES)


def env_var(name: str) -> str:
    return _ENV[name]


__all__ = ["Settings", "resolve", "from_env", "setting_names", "env_var", "field"]
