"""Classes from `plugin_sources` registered by their kind (the seed's duck-typing: provider, provider extension,
feature, tool); a class of no kind, or one that breaks its contract, is a diagnostic naming its origin."""
from __future__ import annotations

from typing import Any, Iterable

from a0nb.errors import A0Error
from a0nb.files.feature_plugin import FeaturePlugin
from a0nb.files.plugin_sources import Found
from a0nb.providers.plugin_api import ProviderExtensionPlugin, ProviderPlugin
from a0nb.engine.tool_plugin import is_tool_plugin


def kind_of(cls: type) -> str | None:
    if issubclass(cls, ProviderPlugin):
        return "provider"
    if issubclass(cls, ProviderExtensionPlugin):
        return "extension"
    if issubclass(cls, FeaturePlugin):
        return "feature"
    if is_tool_plugin(cls):
        return "tool"
    return None


def register_found(agent: Any, found: Iterable[Found]) -> list[tuple[str, type]]:
    registry = agent._lattice_registry()
    done = []
    for item in found:
        kind = kind_of(item.cls)
        try:
            if kind == "provider":
                if not getattr(item.cls, "name", ""):
                    continue  # a base class shipped beside the providers
                registry.register_provider(item.cls)
            elif kind == "extension":
                registry.register_extension(item.cls)
            elif kind == "feature":
                registry.register_feature(item.cls)
            elif kind == "tool":
                agent.tools.register(item.cls)
            else:
                agent.diagnostics.add("warning", "plugin-source", f"{item.cls.__qualname__} from {item.source} is "
                                      "not a ProviderPlugin, ProviderExtensionPlugin, FeaturePlugin or ToolPlugin",
                                      item.origin, fix="subclass one of the agent_core.types base classes")
                continue
        except A0Error as exc:
            agent.diagnostics.add("error", "plugin-source", str(exc), item.origin, fix="see help(a0nb.ext)")
            continue
        done.append((kind, item.cls))
    if done:
        agent.shared.providers.clear()
    return done


__all__ = ["kind_of", "register_found"]
