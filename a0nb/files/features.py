"""Feature plugins: classes in `features/*.py` along the search hierarchy that offer notebook
helpers (`get_template`, `get_completions`, `apply_completion`) and UI (`get_ui_elements`), with each
plugin's scoped config."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from a0nb.files.feature_plugin import is_feature_plugin
from a0nb.files.loader import module_name_for

HOOKS = ("get_template", "get_completions", "apply_completion", "get_ui_elements")
# The fields a `message_footer` / `status_bar` element may name (get_ui_elements specs are checked against them).
FOOTER_FIELDS = ("tokens", "cached_tokens", "cost", "latency", "model", "calls")
STATUS_FIELDS = ("model", "context", "tool", "cost", "turns")


@dataclass(frozen=True)
class Feature:
    """One feature class, instantiated once per hierarchy generation."""

    name: str
    instance: Any
    path: Path
    root_label: str
    config: dict[str, Any] = field(default_factory=dict, hash=False)
    plugin: str | None = None   # the plugin whose features/ folder it came from (None: notebook or user folder)

    @property
    def lattice(self) -> bool:
        """A Crystal Lattice FeaturePlugin: `get_template(config)`, `get_completions(config, text)`."""
        return is_feature_plugin(self.instance)

    def template(self, name: str) -> str | None:
        fn = getattr(self.instance, "get_template", None)
        if fn is None:
            return None
        if self.lattice:  # one template per feature, named after the feature
            if name not in (self.name, getattr(self.instance, "name", None)):
                return None
            return fn(dict(self.config)) or None
        return fn(name, self.config)  # type: ignore[no-any-return]

    def completions(self, text: str, cursor: int, ctx: dict[str, Any]) -> list[str]:
        fn = getattr(self.instance, "get_completions", None)
        if fn is None:
            return []
        if self.lattice:
            return [_completion_text(c) for c in fn(dict(self.config), text[:cursor]) or ()]
        return [_completion_text(c) for c in fn(text, cursor, ctx) or ()]


def features(agent: Any) -> list[Feature]:
    """Every feature class of the agent's hierarchy (higher roots first), memoized until files change, then
    the FeaturePlugins registered from Python (`agent.register_feature`)."""
    hierarchy = agent.hierarchy
    found = hierarchy.memo(("features",), lambda: _discover(agent))
    shared = getattr(agent, "shared", None)
    registry = shared.data.get("_lattice_registry") if shared is not None else None
    if registry is None or not registry.features:
        return found  # type: ignore[no-any-return]
    return [*found, *(Feature(type(f.instance).__name__, f.instance, Path("<registered>"), f.root_label)
                      for f in registry.features)]


def _discover(agent: Any) -> list[Feature]:
    found: list[Feature] = []
    for root, folder in agent.hierarchy.dirs("features"):
        config = _plugin_config(agent, root.plugin)
        for path in sorted(folder.glob("*.py")):
            if path.name.startswith("_"):
                continue
            module = agent.loader.load(path, module_name_for(root.path, path), "feature")
            if module is None:
                continue
            for obj in vars(module).values():
                if _is_feature(obj, module.__name__):
                    instance = _instantiate(agent, obj, path)
                    if instance is not None:
                        found.append(Feature(obj.__name__, instance, path, root.label, config, root.plugin))
    return found


def _is_feature(obj: Any, module_name: str) -> bool:
    return (isinstance(obj, type) and getattr(obj, "__module__", "") == module_name
            and any(callable(getattr(obj, hook, None)) for hook in HOOKS))


def _instantiate(agent: Any, cls: type, path: Path) -> Any:
    try:
        return cls()
    except Exception as exc:  # a user class; its failure is a diagnostic, not a crash of the notebook
        agent.diagnostics.add("error", "feature", f"{cls.__name__}() failed: {type(exc).__name__}: {exc}", path,
                              fix="feature classes must be constructible without arguments")
        return None


def _plugin_config(agent: Any, plugin_name: str | None) -> dict[str, Any]:
    if plugin_name is None:
        return {}
    from a0nb.files.plugins import plugin_config
    hierarchy = agent.hierarchy
    plugin = next((p for p in hierarchy.plugins if p.name == plugin_name), None)
    if plugin is None:
        return {}
    return plugin_config(plugin, hierarchy.workdir, hierarchy.home, hierarchy.profile, agent.diagnostics)


def _completion_text(item: Any) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        return str(item.get("text", item.get("replacement", "")))
    return str(getattr(item, "text", item))


def find_template(agent: Any, name: str) -> tuple[str, Feature] | None:
    """The first feature (highest root) that knows the template `name`."""
    for feature in features(agent):
        text = feature.template(name)
        if text is not None:
            return str(text), feature
    return None


__all__ = ["Feature", "features", "find_template"]
