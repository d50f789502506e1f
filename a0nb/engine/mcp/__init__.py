"""MCP client: servers in Agent Zero's `mcpServers` format over stdio, streamable HTTP or SSE (the
official `mcp` SDK, `a0nb[mcp]`), tried first in tool lookup, their tools listed in the system prompt."""
from a0nb.engine.mcp.client import MCPCallError, MCPToolSpec
from a0nb.engine.mcp.config import ServerSpec, parse_servers
from a0nb.engine.mcp.manager import MCPManager
from a0nb.engine.mcp.tool import MCPTool, attach, mcp_of, tools_prompt

__all__ = ["MCPCallError", "MCPToolSpec", "ServerSpec", "parse_servers", "MCPManager", "MCPTool", "attach",
           "mcp_of", "tools_prompt"]
