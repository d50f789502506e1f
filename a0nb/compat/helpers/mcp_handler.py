"""Agent Zero's `helpers.mcp_handler`: the MCP servers configured for the agent (the `mcp_servers` setting) and
their tools, as a view of a0nb's MCP client for the agent an upstream file is running for. Upstream keeps one
process-wide `MCPConfig`; a0nb's servers belong to a chat, so the instance answers for the current agent.
Upstream's `_12_mcp_prompt.py` (which replaces a0nb's file of that name) reads `servers` and `get_tools_prompt()`,
so the model sees the same MCP tools either way."""
from __future__ import annotations

from typing import Any, ClassVar

START_TIMEOUT = 60.0  # seconds a sync `get_tools_prompt()` waits for servers not yet started (upstream's is sync)


def _manager() -> tuple[Any, Any]:
    from a0nb.compat.agent import current_engine
    from a0nb.ext import mcp_of
    engine = current_engine()
    return (engine, mcp_of(engine)) if engine is not None else (None, None)


class MCPConfig:
    _instance: ClassVar["MCPConfig | None"] = None

    @classmethod
    def get_instance(cls) -> "MCPConfig":
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    @property
    def servers(self) -> list[Any]:
        _engine, manager = _manager()
        return list(manager.servers.values()) if manager is not None else []

    def get_tools_prompt(self, server_name: str = "") -> str:
        """The servers' tools as a0nb's own system-prompt section shows them; servers not started yet are started
        first (this call is synchronous, as upstream's; a server that fails shows as down, with its error)."""
        engine, manager = _manager()
        if manager is None or not manager.servers:
            return ""
        from a0nb.ext import mcp_tools_prompt
        for conn in manager.servers.values():
            if conn.state in ("idle", "stopped"):
                try:
                    conn.start().result(START_TIMEOUT)
                except Exception:  # noqa: BLE001 - recorded on the server, shown in the prompt as down
                    pass
        return str(mcp_tools_prompt(engine, manager))

    def get_tool(self, agent: Any, tool_name: str) -> Any:
        """Tools are looked up by a0nb (MCP servers first, as upstream): a call by name reaches them there."""
        return None

    def has_tool(self, tool_name: str) -> bool:
        _engine, manager = _manager()
        return manager is not None and manager.find(tool_name) is not None
