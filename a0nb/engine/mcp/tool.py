"""MCP tools in the agent: the `Tool` that calls a server, the lookup tried before local tools, and the
system-prompt text listing every server's tools with their schemas and provenance."""
from __future__ import annotations

import json
from typing import Any

from a0nb.engine.mcp.client import MCPCallError, MCPToolSpec
from a0nb.engine.mcp.manager import MCPManager
from a0nb.engine.tool import Response, Tool, ToolInfo


def mcp_of(agent: Any) -> MCPManager:
    """The chat's MCPManager, configured from the agent's `mcp_servers` setting."""
    manager = agent.shared.mcp
    if manager is None:
        manager = agent.shared.mcp = MCPManager()
    servers = agent.settings.mcp_servers
    if servers is not None or manager.configured:  # (none, as before: nothing to apply, no call at each step)
        manager.configure(servers)
    return manager


class MCPTool(Tool):
    """Calls one MCP server tool; errors, crashes and timeouts come back as text and the loop goes on."""

    def __init__(self, *args: Any, spec: MCPToolSpec, manager: MCPManager, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spec = spec
        self.manager = manager

    async def execute(self, **kwargs: Any) -> Response:
        import asyncio
        loop = asyncio.get_running_loop()

        def progress(text: str) -> None:  # arrives on the MCP thread
            loop.call_soon_threadsafe(self.set_progress, text)
        try:
            result = await self.manager.call(self.spec, dict(kwargs), self.agent.settings.mcp_timeout or None, progress)
        except MCPCallError as exc:
            return Response(message=f"{exc}. The MCP tool is unavailable for now; continue without it or try again.")
        return Response(message=format_result(self.spec, result))


def format_result(spec: MCPToolSpec, result: Any) -> str:
    parts = []
    for item in getattr(result, "content", None) or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} content, {getattr(item, 'mime_type', '') or 'unknown type'}]")
        elif kind == "resource":
            res = item.resource
            parts.append(getattr(res, "text", None) or f"[resource {getattr(res, 'uri', '')}]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False))
    text = "\n".join(parts) if parts else "(the tool returned no content)"
    if getattr(result, "is_error", False):
        return f"MCP tool {spec.full_name} reported an error: {text}"
    return text


def lookup_for(agent: Any) -> Any:
    """The `Tools.lookups` entry: `server.tool` or a bare name an MCP server provides, else None."""
    def lookup(name: str) -> ToolInfo | None:
        manager = agent.shared.mcp
        if manager is None or not manager.servers:
            return None
        spec = manager.find(name)
        if spec is None:
            return None

        def factory(**kwargs: Any) -> Tool:
            return MCPTool(spec=spec, manager=manager, **kwargs)
        return ToolInfo(spec.full_name, "class", factory, None, f"MCP server {spec.server}",
                        description=spec.description, schema=spec.schema)
    lookup.a0nb_mcp = True  # type: ignore[attr-defined]
    return lookup


def attach(agent: Any) -> None:
    """Make MCP tools the first lookup of this agent's tools (once per agent)."""
    if not any(getattr(f, "a0nb_mcp", False) for f in agent.tools.lookups):
        agent.tools.lookups.insert(0, lookup_for(agent))


def tools_prompt(agent: Any, manager: MCPManager) -> str:
    """Each server's tools as the model reads them (name, provenance, description, argument schema)."""
    blocks = []
    for conn in manager.servers.values():
        if conn.state != "ready":
            blocks.append(agent.read_prompt("agent.system.mcp_server_down.md", server=conn.spec.name,
                                            state=conn.state, error=conn.error or conn.state).strip())
            continue
        for spec in conn.tools:
            example = {"thoughts": ["..."], "headline": f"Using {spec.full_name}", "tool_name": spec.full_name,
                       "tool_args": {k: "..." for k in (spec.schema.get("properties") or {})}}
            blocks.append(agent.read_prompt(
                "agent.system.mcp_tool.md", tool_name=spec.full_name, server=spec.server, tool=spec.name,
                transport=conn.spec.describe(), description=spec.description.strip() or "(no description)",
                schema=json.dumps(spec.schema, ensure_ascii=False), example=json.dumps(example, ensure_ascii=False)
            ).strip())
    return agent.read_prompt("agent.system.mcp_tools.md", tools="\n\n".join(blocks)).strip() if blocks else ""


__all__ = ["mcp_of", "MCPTool", "attach", "tools_prompt", "format_result"]
