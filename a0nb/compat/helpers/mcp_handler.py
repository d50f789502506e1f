"""Agent Zero's `helpers.mcp_handler`: MCP servers configured for the agent. a0nb's MCP client is issue 21;
until it lands no servers are configured, so there are no MCP tools and the MCP prompt is empty."""
from __future__ import annotations

from typing import Any, ClassVar


class MCPConfig:
    _instance: ClassVar["MCPConfig | None"] = None

    def __init__(self) -> None:
        self.servers: list[Any] = []

    @classmethod
    def get_instance(cls) -> "MCPConfig":
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def get_tools_prompt(self, server_name: str = "") -> str:
        return ""

    def get_tool(self, agent: Any, tool_name: str) -> Any:
        return None

    def has_tool(self, tool_name: str) -> bool:
        return False
