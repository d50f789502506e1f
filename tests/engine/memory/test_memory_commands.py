"""`%a0 memory` / `a0nb memory` (one function) and `%a0 mcp` status text."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.cli import main
from a0nb.engine.mcp.manager import MCPManager, status_text
from a0nb.engine.memory.commands import MemoryCommandError, memory_command


def test_list_search_show_delete_import(nb: Path) -> None:
    kn = nb / ".a0proj" / "knowledge"
    kn.mkdir(parents=True)
    (kn / "pets.md").write_text("The office dog is called Biscuit.")
    agent = Agent(nb, settings={"embedding_model": "hash"})
    assert memory_command(agent, "import").startswith("knowledge: 1 added")
    listed = memory_command(agent, "list").splitlines()
    assert "1 memories in" in listed[0] and "Biscuit" in listed[1] and "[.a0proj/knowledge/pets.md]" in listed[1]
    memory_id = listed[1].split()[0]
    found = memory_command(agent, "search 'office dog' --limit 1")
    assert found.startswith("1 memories for 'office dog':") and memory_id in found
    shown = memory_command(agent, f"show {memory_id}")
    assert shown.startswith(f"id {memory_id}, area main, source .a0proj/knowledge/pets.md") and "chunk=0" in shown
    assert memory_command(agent, "recalled") == "no model call yet"
    from a0nb.testing import answer
    agent.configure(model=[answer("a")], memory_recall_threshold=0.1)
    agent.ask("what is the office dog called?")
    recalled = memory_command(agent, "recalled")
    assert recalled.startswith("call #1, extras: memories (set by _50_recall_memories")
    assert f"[id {memory_id}, area main, score" in recalled and "Biscuit" in recalled
    assert "1 memories in the project's memory" not in listed[0] and "global memory" in listed[0]
    assert memory_command(agent, f"delete {memory_id} nope") == "deleted 1 (not found: nope)"
    for bad, message in [("list tools", "unknown area"), ("search", "needs a query"), ("show", "one id"),
                         ("frobnicate", "unknown action"), ("search x --limit many", "needs a number")]:
        with pytest.raises(MemoryCommandError, match=message):
            memory_command(agent, bad)


def test_command_line(nb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "--workdir", str(nb), "list"]) == 0
    assert "0 memories in" in capsys.readouterr().out
    assert main(["memory", "--workdir", str(nb), "show"]) == 2
    assert "show needs one id" in capsys.readouterr().err


def test_mcp_status_text() -> None:
    assert status_text(None).startswith("no MCP servers configured")
    manager = MCPManager()
    try:
        manager.configure({"mcpServers": {"gone": {"command": "/no/such/binary"}}})
        import asyncio
        asyncio.run(manager.start())
        text = status_text(manager)
        assert text.startswith("gone  failed  (stdio: binary)") and "error:" in text
    finally:
        manager.close()
