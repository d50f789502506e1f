"""`%a0 memory` (list / search / show / delete / import) and `%a0 mcp` (servers, state, tools; start, stop)."""
from __future__ import annotations

from IPython.core.error import UsageError

from a0nb.notebook.commands import Host


def memory(host: Host, rest: str) -> None:
    from a0nb.engine.memory.commands import MemoryCommandError, memory_command
    try:
        print(memory_command(host.agent, rest))
    except MemoryCommandError as exc:
        raise UsageError(f"%a0 {exc}") from None


def mcp(host: Host, rest: str) -> None:
    from a0nb.engine.mcp import mcp_of
    from a0nb.engine.mcp.manager import status_text
    action = rest.strip()
    if action not in ("", "start", "stop"):
        raise UsageError("usage: %a0 mcp [start|stop]")
    manager = mcp_of(host.agent)
    if action == "start":
        host.agent.shared.bridge.run(manager.start)
    elif action == "stop":
        manager.stop()
    print(status_text(manager))


__all__ = ["memory", "mcp"]
