"""What `%a0 plugins` changes: a plugin switched on or off for this notebook (or every notebook), and its
config read and written through its `config` UI element — scoped files, as Agent Zero keeps them."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from a0nb.errors import ConfigError
from a0nb.files.plugins import Plugin, plugin_config, save_plugin_config
from a0nb.inspector.ui_elements import UIElement, coerce_config_value, config_fields, ui_elements


class PluginAdmin:
    def __init__(self, agent: Any) -> None:
        self.agent = agent
        agent.refresh()

    def plugin(self, name: str) -> Plugin:
        found = next((p for p in self.agent.hierarchy.plugins if p.name == name), None)
        if found is None:
            names = ", ".join(p.name for p in self.agent.hierarchy.plugins) or "none"
            raise ConfigError(f"no plugin named {name!r} (plugins found: {names}); a plugin is a folder with a "
                              "plugin.yaml under plugins/ next to the notebook, in $A0NB_HOME/plugins, or installed")
        return found

    def switch(self, name: str, on: bool, scope: str = "notebook") -> str:
        """Write `.toggle-1` / `.toggle-0` (removing the opposite one) in the notebook's `.a0proj/plugins/NAME/`
        or the user's `$A0NB_HOME/plugins/NAME/`; the agent picks it up on its next step."""
        plugin = self.plugin(name)
        if plugin.always_enabled and not on:
            raise ConfigError(f"plugin {name} is always enabled (always_enabled in {plugin.path / 'plugin.yaml'})")
        h = self.agent.hierarchy
        folder = (h.workdir / ".a0proj" if scope == "notebook" else h.home) / "plugins" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / (".toggle-0" if on else ".toggle-1")).unlink(missing_ok=True)
        marker = folder / (".toggle-1" if on else ".toggle-0")
        marker.touch()
        self.agent.refresh()
        return f"a0: plugin {name} {'on' if on else 'off'} for {'this notebook' if scope == 'notebook' else 'every notebook of this user'} ({_relative(marker, h.workdir)})"

    def config(self, name: str) -> tuple[dict[str, Any], UIElement | None]:
        plugin = self.plugin(name)
        h = self.agent.hierarchy
        values = plugin_config(plugin, h.workdir, h.home, h.profile, self.agent.diagnostics)
        element = next((e for e in ui_elements(self.agent, "config") if e.plugin == name), None)
        return values, element

    def set_config(self, name: str, assignments: list[str]) -> str:
        values, element = self.config(name)
        fields = {f.name: f for f in config_fields(element, values)}
        changed = dict(values)
        for item in assignments:
            key, sep, raw = item.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"%a0 plugins config {name}: write key=value, not {item!r}")
            key = key.strip()
            if key not in fields:
                raise ConfigError(f"plugin {name} has no setting {key!r}; it has: {', '.join(fields) or 'none'}")
            try:
                changed[key] = coerce_config_value(fields[key], raw)
            except ValueError as exc:
                raise ConfigError(f"plugin {name}: {exc}") from None
        path = self.save(name, changed)
        shown = " ".join(f"{a.partition('=')[0].strip()}={_show(changed[a.partition('=')[0].strip()])}" for a in assignments)
        return f"a0: {name} config {shown} (saved to {path})"

    def save(self, name: str, values: dict[str, Any]) -> str:
        path = save_plugin_config(self.plugin(name), self.agent.hierarchy.workdir, values)
        self.agent.refresh()
        return _relative(path, self.agent.hierarchy.workdir)

    def config_view(self, name: str) -> Any:
        from a0nb.inspector.plugin_ui import render_plugin_config
        values, element = self.config(name)
        return render_plugin_config(self.agent, name, values, element)

    def form(self, name: str) -> Any:
        from a0nb.inspector.plugin_ui import ConfigForm
        values, element = self.config(name)
        return ConfigForm(name, element, values, lambda new: self.save(name, new))


def _relative(path: Path, base: Path) -> str:
    try:
        return "./" + str(path.relative_to(base))
    except ValueError:
        return str(path)


def _show(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
