"""The chat's MCP servers: configured from the `mcp_servers` setting, started lazily (when the system
prompt first needs their tools), kept for the kernel's life, stopped on reset and at exit; tool lookup
by `server.tool` or by a bare name one server provides."""
from __future__ import annotations

import asyncio
import atexit
import weakref
from typing import Any, Callable

from a0nb.engine.mcp.client import LoopThread, MCPCallError, MCPToolSpec, ServerConnection, require_sdk
from a0nb.engine.mcp.config import ServerSpec, parse_servers


class MCPManager:
    """Every configured server of one chat (agents and subordinates share it)."""

    def __init__(self) -> None:
        self.servers: dict[str, ServerConnection] = {}
        self._runner: LoopThread | None = None
        self.configured: tuple[Any, ...] = ()  # the applied servers' keys (empty: none configured)
        atexit.register(_close_ref, weakref.ref(self))

    @property
    def runner(self) -> LoopThread:
        if self._runner is None:
            self._runner = LoopThread()
        return self._runner

    def configure(self, value: Any) -> None:
        """Apply a `mcp_servers` value: new servers wait to be started, changed or removed ones stop."""
        if value is None and not self.configured:  # (no servers, as before: the system prompt's step asks each time)
            return
        specs = parse_servers(value)
        key = tuple(s.key() for s in specs)
        if key == self.configured:
            return
        if specs:
            require_sdk()
        wanted = {s.name: s for s in specs}
        for name, conn in list(self.servers.items()):
            if name not in wanted or conn.spec.key() != wanted[name].key():
                conn.stop()
                del self.servers[name]
        for name, spec in wanted.items():
            if name not in self.servers:
                self.servers[name] = ServerConnection(spec, self.runner)
        self.configured = key

    async def start(self) -> None:
        """Start every server not yet started (all at once); failures are recorded on the server."""
        pending = [asyncio.wrap_future(c.start()) for c in self.servers.values() if c.state in ("idle", "stopped")]
        # (a failed server is retried by its next call, not by every prompt: its error stays visible)
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    def tools(self) -> list[MCPToolSpec]:
        return [t for c in self.servers.values() if c.state == "ready" for t in c.tools]

    def find(self, name: str) -> MCPToolSpec | None:
        """`server.tool`, or a bare tool name that exactly one ready server offers."""
        server, dot, tool = name.partition(".")
        if dot:
            conn = self.servers.get(server)
            return next((t for t in conn.tools if t.name == tool), None) if conn is not None else None
        matches = [t for t in self.tools() if t.name == name]
        return matches[0] if len(matches) == 1 else None

    async def call(self, spec: MCPToolSpec, args: dict[str, Any], timeout: float | None,
                   progress: Callable[[str], None] | None = None) -> Any:
        conn = self.servers.get(spec.server)
        if conn is None:
            raise MCPCallError(f"MCP server {spec.server!r} is no longer configured")
        limit = conn.spec.tool_timeout or timeout
        return await asyncio.wrap_future(conn.call(spec.name, args, limit, progress))

    def status(self) -> list[dict[str, Any]]:
        """One row per server: name, transport, state, error, stderr tail, tools."""
        return [{"name": c.spec.name, "transport": c.spec.describe(), "state": c.state, "error": c.error,
                 "stderr": c.stderr_tail() if c.state == "failed" else "", "server": c.server_info,
                 "tools": [t.name for t in c.tools] if c.state == "ready" else []}
                for c in self.servers.values()]

    def stop(self) -> None:
        """Stop every server (they start again when next needed)."""
        for conn in self.servers.values():
            conn.stop()

    def close(self) -> None:
        for conn in self.servers.values():
            conn.stop()
        self.servers.clear()
        self.configured = ()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            _drain(runner)


def _drain(runner: LoopThread) -> None:
    """Give the sessions a moment to close their transports (children are terminated), then stop the loop."""
    async def settle() -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if tasks:
            await asyncio.wait(tasks, timeout=5)
    try:
        runner.submit(settle()).result(timeout=6)
    except Exception:  # noqa: BLE001 - closing at exit must never raise
        pass
    runner.stop()


def _close_ref(ref: "weakref.ref[MCPManager]") -> None:
    manager = ref()
    if manager is not None:
        manager.close()




def status_text(manager: MCPManager | None) -> str:
    """`%a0 mcp`: each server's transport, state, tools, and for a failed one its error and stderr tail."""
    if manager is None or not manager.servers:
        return ('no MCP servers configured (setting mcp_servers: {"mcpServers": {"name": {"command": ..., '
                '"args": [...]}}} or {"url": ...})')
    lines = []
    for row in manager.status():
        lines.append(f"{row['name']}  {row['state']}  ({row['transport']})" + (f"  {row['server']}" if row["server"] else ""))
        if row["tools"]:
            lines.append("  tools: " + ", ".join(f"{row['name']}.{t}" for t in row["tools"]))
        if row["error"]:
            lines.append(f"  error: {row['error']}")
        for tail in row["stderr"].strip().splitlines()[-5:]:
            lines.append(f"  stderr: {tail}")
    return "\n".join(lines)


__all__ = ["MCPManager", "ServerSpec", "status_text"]
