"""A small MCP server for the tests (stdio by default; `--http PORT` for streamable HTTP on loopback)."""
from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("toy", version="1.0")


@server.tool(description="Echo the text back, upper-cased.")
def shout(text: str) -> str:
    return text.upper()


@server.tool(description="Return the text unchanged.")
def echo(text: str) -> str:
    return text


@server.tool(description="Return the length of the text.")
def length(text: str) -> int:
    return len(text)


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Sleep for some seconds, then answer.")
def slow(seconds: float) -> str:
    time.sleep(seconds)
    return "woke up"


@server.tool(description="Exit the server process in the middle of the call.")
def crash() -> str:
    sys.stderr.write("toy server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool(description="Count to n, reporting progress.")
async def count(n: int, ctx: Context) -> str:
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i} of {n}")
    return f"counted to {n}"


@server.tool(description="Return the value of an environment variable.")
def env(name: str) -> str:
    return os.environ.get(name, "")


@server.tool(description="Fail with an error.")
def fail(reason: str) -> str:
    raise ToolError(reason)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
