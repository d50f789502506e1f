"""Upstream's `_12_mcp_prompt.py` (the corpus file, unmodified) replaces a0nb's file of that name; it reads
`helpers.mcp_handler.MCPConfig`, which answers for the agent's own MCP servers, so the system prompt still lists
the servers' tools, and the model's call to one still reaches it (a real stdio MCP server: tests/engine/mcp)."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.testing import answer, tool_reply

sys.path.insert(0, str(Path(__file__).parent))
from corpus_judge import find_corpus  # noqa: E402

CORPUS = find_corpus()
pytestmark = [pytest.mark.skipif(CORPUS is None, reason="the upstream corpus (shared/a0-upstream) is not here"),
              pytest.mark.slow]  # a real MCP server process
TOY = str(Path(__file__).resolve().parents[1] / "engine" / "mcp" / "toy_server.py")


def test_upstream_mcp_prompt_lists_the_agents_mcp_tools(nb: Path) -> None:
    target = nb / "extensions" / "system_prompt" / "_12_mcp_prompt.py"
    target.parent.mkdir(parents=True)
    shutil.copy(CORPUS / "extensions/python/system_prompt/_12_mcp_prompt.py", target)  # type: ignore[operator]
    servers = {"mcpServers": {"toy": {"command": sys.executable, "args": [TOY]}}}
    agent = Agent(nb, model=[tool_reply("toy.add", a=2, b=40), answer("done")], settings={"mcp_servers": servers})
    try:
        turn = agent.ask("add with the toy server")
        system = str(turn.calls[0].messages[0]["content"])
        assert "### toy.add" in system and "Add two integers." in system
        (section,) = [p for p in turn.calls[0].parts if p.extension == "_12_mcp_prompt"]
        assert "_12_mcp_prompt.py" in section.source and "[notebook:" in section.source
        assert turn.calls[0].tool_result == "42"
    finally:
        agent.shared.mcp.close()


def test_without_servers_the_upstream_mcp_prompt_adds_nothing(nb: Path) -> None:
    target = nb / "extensions" / "system_prompt" / "_12_mcp_prompt.py"
    target.parent.mkdir(parents=True)
    shutil.copy(CORPUS / "extensions/python/system_prompt/_12_mcp_prompt.py", target)  # type: ignore[operator]
    turn = Agent(nb, model=[answer("done")]).ask("go")
    assert not [p for p in turn.calls[0].parts if p.extension == "_12_mcp_prompt"]
