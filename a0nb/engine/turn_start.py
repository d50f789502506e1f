"""What a turn loads before its first step: the classes named by the setting `plugin_sources`, each
registered by its kind, re-read only when the setting changed."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from a0nb.engine.plugin_kinds import register_found
from a0nb.files.plugin_sources import load_sources
from a0nb.resources import user_home


def apply_plugin_sources(agent: Any) -> None:
    """Load the setting `plugin_sources` when it changed: each class registered by its kind."""
    sources = agent.settings.plugin_sources or []
    key = json.dumps(sources, sort_keys=True, default=str)
    if agent.shared.plugin_sources_key == key:
        return
    agent.diagnostics.clear("plugin-source")
    cache = Path(agent.shared.home or user_home()) / "cache" / "plugin_sources"
    register_found(agent, load_sources(sources, agent.workdir, cache, agent.diagnostics))
    agent.shared.plugin_sources_key = key
