"""MCP client connections (the official `mcp` SDK): each server's session lives in one long-running task
on a private event-loop thread, so it outlives turns and event loops; calls hop onto that loop."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal

from a0nb.engine.mcp.config import ServerSpec
from a0nb.errors import ConfigError

State = Literal["idle", "starting", "ready", "failed", "stopped"]
STDERR_TAIL = 2000


@dataclass(frozen=True)
class MCPToolSpec:
    """A tool one server offers: its name, description and JSON schema of the arguments."""

    server: str
    name: str
    description: str = ""
    schema: dict[str, Any] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f"{self.server}.{self.name}"


class MCPCallError(Exception):
    """A call did not reach an answer (server down, crashed mid-call, timed out)."""


class LoopThread:
    """A daemon thread running an asyncio loop; `submit` schedules a coroutine there."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="a0nb-mcp", daemon=True)
        self.thread.start()

    def submit(self, coro: Awaitable[Any]) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)  # type: ignore[arg-type]

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)


class ServerConnection:
    """One server: started on demand, its session held open by `_serve` until `stop`."""

    def __init__(self, spec: ServerSpec, runner: LoopThread) -> None:
        self.spec = spec
        self.runner = runner
        self.state: State = "idle"
        self.error = ""
        self.tools: list[MCPToolSpec] = []
        self.server_info = ""
        self._session: Any = None
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._generation = 0  # a restarted server's old session must not touch the new one's state
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")

    # -- lifecycle (runs on the runner's loop) ---------------------------------------------------
    def start(self) -> concurrent.futures.Future[Any]:
        """Start (or restart after a failure) and resolve once ready or failed."""
        return self.runner.submit(self._start())

    async def _start(self) -> None:
        if self.state in ("starting", "ready") and self._ready is not None:
            await self._ready.wait()
            return
        self.state, self.error = "starting", ""
        self._ready, self._stop = asyncio.Event(), asyncio.Event()
        self._generation += 1
        asyncio.ensure_future(self._serve(self._generation, self._ready, self._stop))
        try:
            await asyncio.wait_for(self._ready.wait(), self.spec.init_timeout)
        except asyncio.TimeoutError:
            self._fail(f"did not answer within {self.spec.init_timeout:g} s of starting")
            self._stop.set()
            self._generation += 1  # the late session, if any, closes without touching this state

    async def _serve(self, generation: int, ready: asyncio.Event, stop: asyncio.Event) -> None:
        try:
            from mcp.client.session import ClientSession
            async with contextlib.AsyncExitStack() as stack:
                streams = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
                info = await session.initialize()
                self.server_info = f"{info.server_info.name} {info.server_info.version}".strip()
                listed = await session.list_tools()
                self.tools = [MCPToolSpec(self.spec.name, t.name, t.description or "", dict(t.input_schema or {}))
                              for t in listed.tools]
                if generation != self._generation:
                    return
                self._session, self.state = session, "ready"
                ready.set()
                await stop.wait()
        except Exception as exc:  # anyio wraps transport failures in exception groups
            if generation == self._generation:
                self._fail(_reason(exc))
        finally:
            if generation == self._generation:
                self._session = None
                if self.state in ("ready", "starting"):
                    self.state = "stopped"
            ready.set()

    def _transport(self) -> Any:
        spec = self.spec
        if spec.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client
            params = StdioServerParameters(command=spec.command, args=list(spec.args), env=dict(spec.env) or None,
                                           cwd=spec.cwd)
            return stdio_client(params, errlog=self._stderr)
        if spec.transport == "sse":
            from mcp.client.sse import sse_client
            return sse_client(spec.url, headers=dict(spec.headers) or None)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client
        return streamable_http_client(spec.url, http_client=create_mcp_http_client(headers=dict(spec.headers) or None))

    def _fail(self, reason: str) -> None:
        self.state, self.error = "failed", reason

    def stderr_tail(self) -> str:
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read()
        except (OSError, ValueError):
            return ""
        return text[-STDERR_TAIL:]

    def stop(self) -> None:
        if self._stop is not None:
            self.runner.loop.call_soon_threadsafe(self._stop.set)
        if self.state != "idle":
            self.state = "stopped"

    # -- calls -------------------------------------------------------------------------------------
    async def _call(self, tool: str, args: dict[str, Any], timeout: float | None,
                    progress: Callable[[str], None] | None) -> Any:
        if self.state != "ready":
            await self._start()
        if self._session is None:
            raise MCPCallError(f"MCP server {self.spec.name!r} is not running: {self.error or self.state}")

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            if progress is not None:
                progress(message or (f"{done:g}/{total:g}" if total else f"{done:g}"))
        call = self._session.call_tool(tool, args, progress_callback=on_progress)
        try:
            return await asyncio.wait_for(call, timeout)
        except asyncio.TimeoutError:
            raise MCPCallError(f"MCP tool {self.spec.name}.{tool} did not answer within {timeout:g} s") from None
        except Exception as exc:
            if self._session is None or self.state != "ready" or _connection_lost(exc):
                self._lost(_reason(exc))
                tail = self.stderr_tail().strip().splitlines()[-3:]
                raise MCPCallError(f"MCP server {self.spec.name!r} stopped during the call ({_reason(exc)})"
                                   + (f"; its last stderr lines: {' | '.join(tail)}" if tail else "")) from exc
            raise MCPCallError(f"MCP tool {self.spec.name}.{tool} failed: {_reason(exc)}") from exc

    def _lost(self, reason: str) -> None:
        """The session died: orphan it (its task closes the transport) so the next call starts anew."""
        self._fail(f"stopped unexpectedly: {reason}")
        self._session = None
        self._generation += 1
        if self._stop is not None:
            self._stop.set()

    def call(self, tool: str, args: dict[str, Any], timeout: float | None,
             progress: Callable[[str], None] | None = None) -> concurrent.futures.Future[Any]:
        return self.runner.submit(self._call(tool, args, timeout, progress))


def _connection_lost(exc: BaseException) -> bool:
    """A transport failure rather than an error answer from the server (JSON-RPC -32000 or a closed stream)."""
    code = getattr(exc, "code", None)
    if code == -32000:
        return True
    return type(exc).__name__ in ("ClosedResourceError", "BrokenResourceError", "EndOfStream")


def _reason(exc: BaseException) -> str:
    """The innermost useful message of a (possibly grouped) exception."""
    while getattr(exc, "exceptions", None):
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


def require_sdk() -> None:
    import importlib.util
    if importlib.util.find_spec("mcp") is None:
        raise ConfigError("MCP servers are configured but the MCP SDK is not installed: pip install 'a0nb[mcp]'")


__all__ = ["ServerConnection", "LoopThread", "MCPToolSpec", "MCPCallError", "State", "require_sdk"]
