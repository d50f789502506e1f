"""`%a0 memory` and `%a0 mcp` typed in a real InteractiveShell: knowledge import, list, search, show, recalled,
delete, usage errors; MCP servers listed before and after they start, with their tools, and stopped."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Iterator

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from a0nb.notebook.magics import get_magics
from a0nb.testing import answer
from test_magics import dispose, make_shell  # type: ignore[import-not-found]

TOY = str(Path(__file__).parents[1] / "engine" / "mcp" / "toy_server.py")


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / ".ipython"))
    sh = make_shell()
    sh.run_line_magic("load_ext", "a0nb")
    yield sh
    manager = get_magics(sh).agent.shared.mcp
    if manager is not None:
        manager.close()
    sh.run_line_magic("unload_ext", "a0nb")
    dispose()


def a0(shell: InteractiveShell, line: str) -> str:
    with capture_output() as out:
        shell.run_line_magic("a0", line)
    return out.stdout


def test_percent_a0_memory(shell: InteractiveShell, tmp_path: Path) -> None:
    knowledge = tmp_path / ".a0proj" / "knowledge"
    knowledge.mkdir(parents=True)
    (knowledge / "boats.md").write_text("The research vessel is named Petrel and sails from Bergen.")
    shell.run_line_magic("config", "A0.embedding_model = 'hash'")
    assert a0(shell, "memory import").startswith("knowledge: 1 added")
    listed = a0(shell, "memory list").splitlines()
    assert "1 memories in" in listed[0] and "[.a0proj/knowledge/boats.md]" in listed[1]
    memory_id = listed[1].split()[0]
    assert memory_id in a0(shell, "memory search 'research vessel'")
    assert a0(shell, f"memory show {memory_id}").startswith(f"id {memory_id}, area main, source .a0proj/knowledge/boats.md")
    get_magics(shell).agent.configure(model=[answer("Petrel")], memory_recall_threshold=0.1)
    shell.run_line_magic("a0", "ask what is the research vessel called?")
    recalled = a0(shell, "memory recalled")
    assert "extras: memories (set by _50_recall_memories" in recalled and f"[id {memory_id}, area main, score" in recalled
    assert a0(shell, f"memory delete {memory_id}").strip() == "deleted 1"
    with pytest.raises(UsageError, match="needs a query"):
        shell.run_line_magic("a0", "memory search")


def test_percent_a0_mcp(shell: InteractiveShell) -> None:
    assert a0(shell, "mcp").startswith("no MCP servers configured")
    servers = {"mcpServers": {"toy": {"command": sys.executable, "args": [TOY]},
                              "broken": {"command": "/no/such/mcp-binary"}}}
    shell.run_line_magic("config", f"A0.mcp_servers = {json.dumps(servers)}")
    before = a0(shell, "mcp")
    assert "toy  " in before and "broken  " in before and "tools:" not in before  # started lazily
    started = a0(shell, "mcp start")
    assert "toy  ready  (stdio: " in started and "toy.add" in started
    assert "broken  failed" in started and "error:" in started
    assert "toy  stopped" in a0(shell, "mcp stop")
    with pytest.raises(UsageError, match=r"usage: %a0 mcp \[start\|stop\]"):
        shell.run_line_magic("a0", "mcp restart")
