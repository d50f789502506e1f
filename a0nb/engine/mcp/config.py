"""MCP server configuration in Agent Zero's format: `{"mcpServers": {"name": {"command", "args", "env",
"cwd"} | {"url", "headers", "type"}}}` (also a bare name → spec mapping, a list with `name`s, or JSON text)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

from a0nb.errors import ConfigError

Transport = Literal["stdio", "streamable-http", "sse"]
_HTTP_TYPES = {"streamable-http": "streamable-http", "streamable_http": "streamable-http", "http": "streamable-http",
               "streamablehttp": "streamable-http", "sse": "sse"}
_NAME = re.compile(r"[A-Za-z0-9_\-]+")
_KNOWN = {"command", "args", "env", "cwd", "url", "serverUrl", "headers", "type", "transport", "timeout",
          "init_timeout", "tool_timeout", "disabled", "description", "name", "encoding"}


@dataclass(frozen=True)
class ServerSpec:
    """One configured MCP server."""

    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    init_timeout: float = 30.0
    tool_timeout: float | None = None
    description: str = ""

    def key(self) -> tuple[Any, ...]:
        """Equal keys: the same server (a changed config restarts it)."""
        return (self.name, self.transport, self.command, self.args, tuple(sorted(self.env.items())), self.cwd,
                self.url, tuple(sorted(self.headers.items())))

    def describe(self) -> str:
        if self.transport == "stdio":  # the command's file name only: prompts must not carry machine paths
            return "stdio: " + " ".join([self.command.replace("\\", "/").rsplit("/", 1)[-1], *self.args])
        return f"{self.transport}: {self.url}"


def parse_servers(value: Any) -> list[ServerSpec]:
    """Every enabled server of a `mcp_servers` value; a malformed entry raises ConfigError naming it."""
    if value is None or value == "" or value == {}:
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ConfigError(f"mcp_servers is not valid JSON ({exc}); write "
                              '{"mcpServers": {"name": {"command": "...", "args": [...]}}}') from None
    if isinstance(value, Mapping) and "mcpServers" in value:
        value = value["mcpServers"]
    if isinstance(value, list):
        items = []
        for i, entry in enumerate(value):
            if not isinstance(entry, Mapping) or not entry.get("name"):
                raise ConfigError(f"mcp_servers[{i}] needs a \"name\" (or use the {{\"mcpServers\": {{name: ...}}}} form)")
            items.append((str(entry["name"]), entry))
    elif isinstance(value, Mapping):
        items = [(str(k), v) for k, v in value.items()]
    else:
        raise ConfigError(f"mcp_servers must be a mapping of server names to settings (got {type(value).__name__})")
    specs = [_spec(name, entry) for name, entry in items]
    return [s for s in specs if s is not None]


def _spec(name: str, entry: Any) -> ServerSpec | None:
    where = f"mcp server {name!r}"
    if not _NAME.fullmatch(name):
        raise ConfigError(f"{where}: names may use letters, digits, '_' and '-' only (tools are called name.tool)")
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: settings must be a mapping with \"command\" or \"url\"")
    if entry.get("disabled"):
        return None
    unknown = sorted(set(entry) - _KNOWN)
    if unknown:
        raise ConfigError(f"{where}: unknown keys {', '.join(unknown)} (known: {', '.join(sorted(_KNOWN))})")
    kind = str(entry.get("type") or entry.get("transport") or "").lower()
    url = str(entry.get("url") or entry.get("serverUrl") or "")
    try:
        init_timeout = float(entry.get("init_timeout") or entry.get("timeout") or 30.0)
        tool_timeout = float(entry["tool_timeout"]) if entry.get("tool_timeout") else None
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: timeouts are numbers of seconds") from None
    description = str(entry.get("description") or "")
    if entry.get("command"):
        if kind not in ("", "stdio"):
            raise ConfigError(f"{where}: \"command\" starts a stdio server, but type is {kind!r}")
        args = entry.get("args") or []
        if not isinstance(args, list):
            raise ConfigError(f"{where}: \"args\" must be a list of strings")
        env = entry.get("env") or {}
        if not isinstance(env, Mapping):
            raise ConfigError(f"{where}: \"env\" must be a mapping of variable names to values")
        return ServerSpec(name, "stdio", str(entry["command"]), tuple(str(a) for a in args),
                          {str(k): str(v) for k, v in env.items()}, entry.get("cwd"), init_timeout=init_timeout,
                          tool_timeout=tool_timeout, description=description)
    if url:
        transport = _HTTP_TYPES.get(kind or "streamable-http")
        if transport is None:
            raise ConfigError(f"{where}: unknown type {kind!r}; use stdio, streamable-http or sse")
        headers = entry.get("headers") or {}
        if not isinstance(headers, Mapping):
            raise ConfigError(f"{where}: \"headers\" must be a mapping")
        return ServerSpec(name, transport, url=url, headers={str(k): str(v) for k, v in headers.items()},  # type: ignore[arg-type]
                          init_timeout=init_timeout, tool_timeout=tool_timeout, description=description)
    raise ConfigError(f"{where}: needs \"command\" (a stdio server) or \"url\" (an HTTP server)")


__all__ = ["ServerSpec", "parse_servers", "Transport"]
