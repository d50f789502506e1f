"""MCP through the agent: real servers (the toy stdio server written here, `mcp-server-time` from the
package index, the toy server over streamable HTTP on loopback), MCP-first lookup, schemas in the system
prompt with provenance, progress, timeouts, failures reported while the loop goes on, reset."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.testing import answer, tool_reply

pytestmark = pytest.mark.slow  # real MCP server processes: left out of `make test-fast`

TOY = str(Path(__file__).with_name("toy_server.py"))


def toy(**extra):
    return {"mcpServers": {"toy": {"command": sys.executable, "args": [TOY], **extra}}}


def _results(turn):
    return [c.tool_result for c in turn.calls if c.tool_request and c.tool_request["tool_name"] != "response"]


def _close(agent):
    manager = agent.shared.mcp
    if manager is not None:
        manager.close()


def test_stdio_server_tools_are_listed_and_called_first(nb: Path) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "shout.py").write_text("def shout(text: str) -> str:\n    return 'local ' + text\n")
    agent = Agent(nb, model=[tool_reply("toy.add", a=2, b=40), tool_reply("shout", text="mcp wins"),
                             tool_reply("toy.nope"), answer("done")], settings={"mcp_servers": toy()})
    try:
        turn = agent.ask("use the toy server")
        added, shouted, missing = _results(turn)
        assert added == "42" and shouted == "MCP WINS"
        assert "not" in missing.lower() and "toy.nope" in missing  # unknown tool: the usual not-found text
        system = turn.calls[0].messages[0]["content"]
        assert "### toy.add" in system and "(MCP server `toy`, tool `add`; stdio:" in system
        assert '"required": ["a", "b"]' in system and "Add two integers." in system
        assert agent.tools.resolve("toy.add").root_label == "MCP server toy"
        [row] = agent.shared.mcp.status()
        assert row["state"] == "ready" and "shout" in row["tools"]
    finally:
        _close(agent)


def test_real_server_from_the_index_mcp_server_time(nb: Path) -> None:
    config = {"mcpServers": {"time": {"command": sys.executable,
                                      "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}}}
    agent = Agent(nb, model=[tool_reply("time.convert_time", source_timezone="UTC", time="12:00",
                                        target_timezone="Asia/Tokyo"), answer("21:00 in Tokyo")],
                  settings={"mcp_servers": config})
    try:
        turn = agent.ask("noon UTC in Tokyo?")
        [result] = _results(turn)
        assert '"timezone": "Asia/Tokyo"' in result and "T21:00:00+09:00" in result
        assert "### time.get_current_time" in turn.calls[0].messages[0]["content"]
    finally:
        _close(agent)


def test_failures_are_reported_and_the_loop_goes_on(nb: Path) -> None:
    config = {"mcpServers": {"toy": {"command": sys.executable, "args": [TOY]},
                             "broken": {"command": "/no/such/server-binary"}}}
    agent = Agent(nb, model=[tool_reply("toy.fail", reason="bad input"), tool_reply("toy.slow", seconds=30),
                             tool_reply("toy.crash"), tool_reply("toy.add", a=1, b=1), answer("survived")],
                  settings={"mcp_servers": config, "mcp_timeout": 4})
    try:
        turn = agent.ask("break things")
        assert turn.text == "survived"
        failed, slow, crashed, after = _results(turn)
        assert failed.startswith("MCP tool toy.fail reported an error") and "bad input" in failed
        assert "did not answer within 4 s" in slow
        assert "toy" in crashed and ("stopped" in crashed or "failed" in crashed)
        assert after == "2"  # the crashed server was started again by the next call
        system = turn.calls[0].messages[0]["content"]
        assert "MCP server `broken` is unavailable" in system
        rows = {r["name"]: r for r in agent.shared.mcp.status()}
        assert rows["broken"]["state"] == "failed" and rows["broken"]["error"]
    finally:
        _close(agent)


def test_progress_streams_to_the_live_view(nb: Path) -> None:
    seen = []
    agent = Agent(nb, model=[tool_reply("toy.count", n=3), answer("ok")], settings={"mcp_servers": toy()})
    agent.register_extension("tool_output_update", lambda ctx=None, **kw: seen.append(ctx["content"]))
    try:
        assert _results(agent.ask("count"))[0] == "counted to 3"
        assert "step 3 of 3" in seen
    finally:
        _close(agent)


def test_secrets_are_masked_in_arguments_and_results(nb: Path) -> None:
    secret = "s3cr3t-value-123"
    (nb / ".a0proj").mkdir()
    (nb / ".a0proj" / "secrets.env").write_text(f"TOY_TOKEN={secret}\n")
    agent = Agent(nb, model=[tool_reply("toy.length", text="§§secret(TOY_TOKEN)"),
                             tool_reply("toy.echo", text="§§secret(TOY_TOKEN)"), answer("ok")],
                  settings={"mcp_servers": toy()})
    try:
        turn = agent.ask("use the token")
        length, echoed = _results(turn)
        assert length == str(len(secret))  # the server received the real value
        assert secret not in echoed and secret not in str([m.content for m in agent.history.messages()])
        assert secret not in str([c.messages for c in turn.calls])
    finally:
        _close(agent)


def test_reset_stops_servers_and_they_start_again(nb: Path) -> None:
    agent = Agent(nb, model=[tool_reply("toy.add", a=1, b=2), answer("a"), tool_reply("toy.add", a=3, b=4),
                             answer("b")], settings={"mcp_servers": toy()})
    try:
        agent.ask("one")
        manager = agent.shared.mcp
        agent.reset()
        assert all(r["state"] == "stopped" for r in manager.status())
        agent.configure(model=[tool_reply("toy.add", a=3, b=4), answer("b")])
        assert _results(agent.ask("two")) == ["7"]
    finally:
        _close(agent)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server():
    port = _free_port()
    proc = subprocess.Popen([sys.executable, TOY, "--http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # wait for the port to accept connections (no fixed sleep)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("the toy HTTP server exited")
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(10)


def test_streamable_http_transport(nb: Path, http_server: str) -> None:
    agent = Agent(nb, model=[tool_reply("toy.add", a=20, b=22), answer("ok")],
                  settings={"mcp_servers": {"mcpServers": {"toy": {"url": http_server}}}})
    try:
        turn = agent.ask("add over http")
        assert _results(turn) == ["42"]
        assert "streamable-http: " + http_server in turn.calls[0].messages[0]["content"]
    finally:
        _close(agent)


def test_servers_from_the_agent_keyword_and_from_the_project(nb: Path) -> None:
    """`Agent(mcp_servers=...)` and the project's config (`.a0proj`) configure servers as the setting does."""
    agent = Agent(nb, model=[tool_reply("toy.add", a=1, b=2), answer("ok")], mcp_servers=toy())
    try:
        assert _results(agent.ask("add")) == ["3"]
    finally:
        _close(agent)
    import json
    config = nb / ".a0proj" / "plugins" / "_model_config"
    config.mkdir(parents=True)
    (config / "config.json").write_text(json.dumps({"mcp_servers": toy()}))
    project = Agent(nb, model=[tool_reply("toy.add", a=5, b=6), answer("ok")])
    try:
        assert _results(project.ask("add")) == ["11"]
    finally:
        _close(project)
