"""Agent Zero's mcpServers format: the accepted forms and clear errors for malformed entries."""
from __future__ import annotations

import json

import pytest

from a0nb.engine.mcp import parse_servers
from a0nb.errors import ConfigError


def test_forms_of_the_config() -> None:
    config = {"mcpServers": {
        "time": {"command": "python", "args": ["-m", "mcp_server_time"], "env": {"TZ": "UTC"}},
        "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
        "events": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        "off": {"command": "nothing", "disabled": True}}}
    specs = {s.name: s for s in parse_servers(config)}
    assert set(specs) == {"time", "remote", "events"}
    assert specs["time"].transport == "stdio" and specs["time"].args == ("-m", "mcp_server_time")
    assert specs["remote"].transport == "streamable-http" and specs["remote"].headers["Authorization"] == "Bearer x"
    assert specs["events"].transport == "sse"
    assert [s.name for s in parse_servers(json.dumps(config))] == ["time", "remote", "events"]
    assert [s.name for s in parse_servers(config["mcpServers"])] == ["time", "remote", "events"]
    assert [s.name for s in parse_servers([{"name": "t", "command": "x"}])] == ["t"]
    assert parse_servers(None) == [] and parse_servers("") == []


@pytest.mark.parametrize("value, message", [
    ("{not json", "not valid JSON"),
    ({"mcpServers": {"a": {"args": []}}}, 'needs "command"'),
    ({"mcpServers": {"a b": {"command": "x"}}}, "names may use"),
    ({"mcpServers": {"a": {"command": "x", "args": "-v"}}}, '"args" must be a list'),
    ({"mcpServers": {"a": {"command": "x", "colour": 1}}}, "unknown keys colour"),
    ({"mcpServers": {"a": {"url": "http://h", "type": "carrier-pigeon"}}}, "unknown type"),
    ([{"command": "x"}], 'needs a "name"'),
    (42, "must be a mapping"),
])
def test_malformed_entries_name_the_problem(value, message) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_servers(value)


def test_each_look_applies_the_setting_as_it_is_now() -> None:
    """`mcp_of` skips `configure` while nothing is set nor was applied; a setting that appears, changes or goes
    away is applied at the next look all the same (servers are configured, not started)."""
    from types import SimpleNamespace

    from a0nb.engine.mcp.tool import mcp_of
    settings = SimpleNamespace(mcp_servers=None)
    agent = SimpleNamespace(shared=SimpleNamespace(mcp=None), settings=settings)
    manager = mcp_of(agent)
    try:
        assert manager.servers == {} and manager.configured == ()
        settings.mcp_servers = {"mcpServers": {"one": {"command": "/no/such/binary"}}}
        assert mcp_of(agent) is manager and list(manager.servers) == ["one"]
        settings.mcp_servers = {"mcpServers": {"two": {"command": "/no/such/binary"}}}
        assert list(mcp_of(agent).servers) == ["two"]
        settings.mcp_servers = None
        assert mcp_of(agent).servers == {} and manager.configured == ()
    finally:
        manager.close()
