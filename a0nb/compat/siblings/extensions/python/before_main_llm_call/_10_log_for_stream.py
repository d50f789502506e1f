"""Headings of the agent's log items, as upstream's `_10_log_for_stream` module defines them."""
from __future__ import annotations

from typing import Any


def build_heading(agent: Any, text: str, icon: str = "network_intelligence") -> str:
    return f"{agent.agent_name}: {text}"


def build_default_heading(agent: Any) -> str:
    return build_heading(agent, "Calling LLM...")
