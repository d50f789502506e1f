"""Agent Zero's `helpers.plugins`: a plugin's effective configuration for an agent (a0nb's plugin config:
`default_config.yaml`, then the highest-priority scoped `config.json`)."""
from __future__ import annotations

from typing import Any

from a0nb.ext import plugin_config


def _engine(agent: Any) -> Any:
    if agent is None:
        from a0nb.compat.agent import current
        agent = current()
    return getattr(agent, "_engine", agent)


def find_plugin(name: str, agent: Any = None) -> Any:
    engine = _engine(agent)
    if engine is None:
        return None
    return next((p for p in engine.hierarchy.plugins if p.name == name), None)


def get_plugin_config(name: str, agent: Any = None, **kwargs: Any) -> dict[str, Any] | None:
    engine = _engine(agent)
    plugin = find_plugin(name, engine)
    if plugin is None:
        return None
    return plugin_config(plugin, engine.workdir, engine.hierarchy.home, engine.profile, engine.diagnostics)


def get_enabled_plugins(agent: Any = None) -> list[str]:
    engine = _engine(agent)
    return [] if engine is None else [p.name for p in engine.hierarchy.plugins]


def register_watchdogs() -> None:
    """Nothing to register: a0nb re-checks plugin folders, toggles and config.json at every step."""


def call_plugin_hook(plugin_name: str, hook_name: str, *args: Any, default: Any = None,
                     raise_on_error: bool = True, agent: Any = None, **kwargs: Any) -> Any:
    """Call `hook_name` of the plugin's `hooks.py` (loaded as a0nb loads any plugin file, so it must be trusted
    like the plugin's other code); `default` when the plugin, the file or the function is missing."""
    engine = _engine(agent)
    plugin = find_plugin(plugin_name, engine)
    hooks = plugin.path / "hooks.py" if plugin is not None else None
    if hooks is None or not hooks.is_file():
        return default
    module = engine.loader.load(hooks, f"plugins.{plugin_name}.hooks", "plugin hooks")
    fn = getattr(module, hook_name, None) if module is not None else None
    if not callable(fn):
        return default
    try:
        return fn(*args, **kwargs)
    except Exception:
        if raise_on_error:
            raise
        return default
