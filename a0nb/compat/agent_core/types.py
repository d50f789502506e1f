"""`from agent_core.types import ProviderPlugin` in a Crystal Lattice plugin gets a0nb's class."""
from a0nb.ext import FeaturePlugin, ProviderExtensionPlugin, ProviderPlugin, ToolPlugin

__all__ = ["ProviderPlugin", "ProviderExtensionPlugin", "FeaturePlugin", "ToolPlugin"]
