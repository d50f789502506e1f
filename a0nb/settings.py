"""Agent settings and their layers: call argument > `%config A0.*` > `A0NB_*` environment >
`NB/.a0proj/plugins/_model_config/config.json` > profile `settings.yaml` > defaults."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, Mapping

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
    # finished call records whose messages and parts stay in memory; older ones are written to a JSONL trace in
    # $A0NB_HOME/traces (removed at exit) and read back when shown. 0: all stay in memory, held by reference
    record_keep: int = 0
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
        value = int(value)
    if name == "record_keep" and value < 0:
        raise ConfigError(f"record_keep must be 0 (keep every call record in memory) or more (got {value!r})")
    if "float" in str(kind) and not isinstance(value, (int, float)):
        return float(value)
    if name == "approval" and value not in ("auto", "ask", "deny"):
        raise ConfigError(f"approval must be auto, ask or deny (got {value!r})")
    return value


def from_env(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    env = os.environ if env is None else env
    return {name: _coerce(name, env[var]) for name, var in _ENV.items() if env.get(var, "") != ""}


def from_file(path: Path, diagnostics: Diagnostics, *, model_config: bool = False) -> dict[str, Any]:
    """A settings file's known settings (`model_config`: the raw mapping of a `_model_config` config.json)."""
    if not path.is_file():
        return {}
    import yaml  # (here: `%load_ext` imports this module, and reads no file)
    from a0nb import safe_yaml
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else safe_yaml.load(text)
    except (ValueError, yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
        diagnostics.add("error", "settings", f"unreadable settings: {exc}", path, fix="fix the file or delete it")
        return {}
    if not isinstance(data, dict):
        diagnostics.add("error", "settings", "settings must be a mapping", path)
        return {}
    if model_config:
        return dict(data)
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
    return _trusted_only(path, from_file(path, diagnostics))


def _trusted_only(path: Path, values: dict[str, Any]) -> dict[str, Any]:
    if values and not is_trusted(path):
        values = {k: v for k, v in values.items() if k not in GUARDED_SETTINGS}
    return values


def resolve(workdir: Path, profile_dirs: list[Path], diagnostics: Diagnostics, *,
            magic: Mapping[str, Any] | None = None, arguments: Mapping[str, Any] | None = None,
            home: Path | None = None) -> Settings:
    """Merge the layers, lowest first; the `_model_config` plugin's config (and a chosen preset) sits between
    the profile's settings.yaml and the environment."""
    merged: dict[str, Any] = {}
    for d in reversed(profile_dirs):  # lower-priority profile folders first
        merged.update(folder_layer(d / "settings.yaml", diagnostics))
    config = model_config_file(workdir, profile_dirs, home)
    if config is not None:
        merged.update(_trusted_only(config, model_config_values(from_file(config, diagnostics, model_config=True))))
    top = from_env()
    for layer in (magic or {}, arguments or {}):
        top.update({k: _coerce(k, v) for k, v in layer.items() if v is not None and k in _NAMES})
    preset = top.get("preset", merged.get("preset"))
    if preset:
        merged.update(preset_values(str(preset), workdir, home, diagnostics))
    merged.update(top)
    return replace(Settings(), **merged)


# -- the `_model_config` plugin (Agent Zero's model settings) ------------------------------------------------
MODEL_CONFIG = Path("plugins") / "_model_config"
# Agent Zero's model slots and the a0nb settings each of their keys sets
_SLOTS: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "chat_model": {"spec": "model", "ctx_length": "ctx_length", "api_base": "api_base", "kwargs": "model_kwargs"},
    "utility_model": {"spec": "utility_model", "ctx_length": "utility_ctx_length", "api_base": "utility_api_base",
                      "kwargs": "utility_model_kwargs"},
    "embedding_model": {"spec": "embedding_model"},
})
_PRESET_SLOTS: Mapping[str, str] = MappingProxyType({"chat": "chat_model", "utility": "utility_model",
                                                      "embedding": "embedding_model"})


def model_config_file(workdir: Path, profile_dirs: list[Path], home: Path | None = None) -> Path | None:
    """The `_model_config/config.json` that applies, chosen as a whole (Agent Zero's order): the project's
    profile scope, the project (`.a0proj`), then each profile folder, then the user's global one."""
    project = workdir / ".a0proj"
    scoped = [d for d in profile_dirs if project in d.parents]
    others = [d for d in profile_dirs if project not in d.parents]
    from a0nb.resources import user_home
    for d in [*scoped, project, *others, home or user_home()]:
        path = d / MODEL_CONFIG / "config.json"
        if path.is_file():
            return path
    return None


def _slot_values(slot: str, value: Any) -> dict[str, Any]:
    keys = _SLOTS[slot]
    if isinstance(value, str):
        return {keys["spec"]: value}
    if not isinstance(value, Mapping):
        return {}
    out: dict[str, Any] = {}
    name, provider = str(value.get("name") or ""), str(value.get("provider") or "")
    if name:
        out[keys["spec"]] = f"{provider}/{name}" if provider and not name.startswith(provider + "/") else name
    for key, setting in keys.items():
        if key != "spec" and value.get(key) not in (None, "", {}):
            out[setting] = _coerce(setting, value[key])
    return out


def model_config_values(data: Mapping[str, Any]) -> dict[str, Any]:
    """a0nb settings from a `_model_config` config: Agent Zero's slots (`chat_model: {provider, name,
    ctx_length, api_base, kwargs}`, `utility_model`, `embedding_model`), `model_preset`, or a0nb's own keys."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        if k in _NAMES and k not in _SLOTS:
            try:
                out[k] = _coerce(k, v)
            except (ValueError, TypeError, ConfigError):
                continue  # a wrong value here is not a model setting a0nb can use
    for slot in _SLOTS:
        if slot in data:
            out.update(_slot_values(slot, data[slot]))
    if data.get("model_preset"):
        out["preset"] = str(data["model_preset"])
    return out


def preset_files(workdir: Path, home: Path | None = None) -> list[Path]:
    """Where presets are defined, highest first: the project's `presets.yaml`, then the user's."""
    from a0nb.resources import user_home
    return [d / MODEL_CONFIG / "presets.yaml" for d in (workdir / ".a0proj", home or user_home())]


def presets(workdir: Path, home: Path | None, diagnostics: Diagnostics) -> dict[str, tuple[dict[str, Any], Path]]:
    """Every preset by name (a project's preset shadows the user's of the same name), with its file."""
    found: dict[str, tuple[dict[str, Any], Path]] = {}
    for path in preset_files(workdir, home):
        if not path.is_file():
            continue
        import yaml
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
            diagnostics.add("error", "settings", f"unreadable presets: {exc}", path, fix="fix the YAML list of presets")
            continue
        if not isinstance(data, list):
            diagnostics.add("error", "settings", "presets.yaml must be a list of {name, chat, utility}", path)
            continue
        for entry in data:
            if isinstance(entry, Mapping) and entry.get("name") and str(entry["name"]) not in found:
                found[str(entry["name"])] = (dict(entry), path)
    return found


def preset_values(name: str, workdir: Path, home: Path | None, diagnostics: Diagnostics) -> dict[str, Any]:
    known = presets(workdir, home, diagnostics)
    if name not in known:
        diagnostics.add("error", "settings", f"model preset {name!r} is not defined"
                        + (f" (defined: {', '.join(sorted(known))})" if known else ""), preset_files(workdir, home)[0],
                        fix="add it to .a0proj/plugins/_model_config/presets.yaml, or choose a defined one")
        return {}
    entry, path = known[name]
    out: dict[str, Any] = {}
    for key, slot in _PRESET_SLOTS.items():
        if key in entry:
            out.update(_slot_values(slot, entry[key]))
    return _trusted_only(path, out)


def setting_names() -> list[str]:
    return sorted(_NAMES)


def env_var(name: str) -> str:
    return _ENV[name]


__all__ = ["Settings", "resolve", "from_env", "setting_names", "env_var", "field", "model_config_file",
           "model_config_values", "presets", "preset_values"]
