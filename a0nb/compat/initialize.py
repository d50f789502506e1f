"""Agent Zero's `initialize`: the agent configuration (a0nb's settings hold the models)."""
from __future__ import annotations

from typing import Any

from a0nb.compat.agent import AgentConfig


def initialize_agent(override_settings: dict[str, Any] | None = None) -> AgentConfig:
    settings = dict(override_settings or {})
    profile = str(settings.get("agent_profile", "") or "")
    return AgentConfig(mcp_servers=str(settings.get("mcp_servers", "")), profile=profile,
                       additional={k: v for k, v in settings.items() if k not in ("agent_profile", "mcp_servers")})
