"""`helpers.settings.get_settings()` as an upstream file sees it: the agent's own profile and `mcp_servers` (as
upstream keeps it, one JSON text), not fixed defaults."""
from __future__ import annotations

import json
from pathlib import Path

from a0nb import Agent
from a0nb.testing import answer

PROBE = '''from helpers.tool import Tool, Response
from helpers.settings import get_settings


class Probe(Tool):
    async def execute(self, **kwargs):
        s = get_settings()
        return Response(message=json.dumps([s["agent_profile"], json.loads(s["mcp_servers"]), s["workdir_show"]]),
                        break_loop=False)
'''


def test_settings_follow_the_agent(nb: Path) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "probe.py").write_text("import json\n" + PROBE)
    servers = {"mcpServers": {"gone": {"command": "a0nb-no-such-command-xyz"}}}
    agent = Agent(nb, profile="developer", model=[json.dumps({"tool_name": "probe", "tool_args": {}}), answer("ok")],
                  settings={"mcp_servers": servers})
    try:
        turn = agent.ask("go")
    finally:
        if agent.shared.mcp is not None:
            agent.shared.mcp.close()
    assert json.loads(turn.calls[0].tool_result) == ["developer", servers, True]
    plain = Agent(nb, model=[json.dumps({"tool_name": "probe", "tool_args": {}}), answer("ok")])
    assert json.loads(plain.ask("go").calls[0].tool_result) == ["default", {"mcpServers": {}}, True]
