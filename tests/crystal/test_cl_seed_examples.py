"""Every code example of the Crystal Lattice seed (004), read from the seed file at test time, runs with only
its import line changed (a0nb.ext), and unchanged (agent_core.types) when placed where a user puts it."""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from a0nb import Agent
from a0nb.ext import LatticeCore
from a0nb.providers.stream import complete
from a0nb.testing import answer
from cl_seed import block, registering_example, with_ext_import
from conftest import chunks, seed_module

MSGS = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "Hello"}]


def _streaming(mod: Any, stream: list[dict[str, Any]], name: str = "acc") -> type:
    """The seed's accumulator MyProvider (its `...` stands for init and stream_api) completed by a subclass."""
    class Streaming(mod.MyProvider):
        def init(self, config: dict[str, Any]) -> dict[str, Any]:
            return {"config": config}

        def stream_api(self, native_messages: list[dict[str, Any]], state: dict[str, Any]) -> Any:
            yield from stream
    Streaming.name = name
    return Streaming


# ---------------------------------------------------------------- the examples, one by one


def test_echo_provider_answers_through_agent_core() -> None:
    mod = seed_module("EchoProvider")
    core = LatticeCore()
    core.register_provider(mod.EchoProvider)
    session = core.add_message(core.create_session(), "user", "Hello")
    session, finals = core.send_request(session, {"provider": "echo"})
    assert [m["content"] for m in finals] == ["Echo: Hello"]
    assert [m["role"] for m in session.messages] == ["user", "assistant"]


def test_echo_provider_unchanged_in_providers_folder_is_the_model_prefix(nb: Path) -> None:
    (nb / "providers").mkdir()
    (nb / "providers" / "echo.py").write_text(block("EchoProvider"))  # `from agent_core.types import ...` as written
    agent = Agent(nb, model="echo:echo-1")
    provider = agent.provider("chat")
    reply = asyncio.run(complete(provider, MSGS, agent.model_config("chat"), extensions=[]))
    assert reply.content == "Echo: Hello" and reply.model == "echo:echo-1"
    assert not agent.diagnostics.of("provider")
    assert "agent_core" not in sys.modules  # the alias lived only while a0nb imported the file


def test_accumulator_provider_streams_partials_and_finalizes_the_accumulated_message() -> None:
    mod = seed_module("MyProvider")
    stream = chunks("Hello there, streamed")
    core = LatticeCore()
    core.register_provider(_streaming(mod, stream))
    events = list(core.send_request_stream(core.create_session(), {"provider": "acc"}))
    partials = [e["message"]["content"] for e in events if e["type"] == "partial"]
    assert "".join(partials) == "Hello there, streamed" and len(partials) == len(stream)
    final = events[-1]
    assert final["type"] == "final" and [m["content"] for m in final["finals"]] == ["Hello there, streamed"]


def test_prefix_extension_prefixes_the_finals_of_a_call_api_provider() -> None:
    mod = seed_module("EchoProvider", "PrefixExtension")
    core = LatticeCore()
    core.register_provider(mod.EchoProvider, extensions=[mod.PrefixExtension])
    _, finals = core.send_request(core.add_message(core.create_session(), "user", "Hi"), {"provider": "echo"})
    assert finals[0]["content"] == "[EXT] Echo: Hi"  # default from get_config_schema
    _, finals = core.send_request(core.add_message(core.create_session(), "user", "Hi"),
                                  {"provider": "echo", "prefix": ">>"})
    assert finals[0]["content"] == ">> Echo: Hi"


def test_streaming_extension_accumulates_reasoning_into_the_shared_partial() -> None:
    mod = seed_module("MyProvider", "MyStreamingExtension")
    core = LatticeCore()
    core.register_provider(_streaming(mod, chunks("the answer", reasoning="think first")),
                           extensions=[mod.MyStreamingExtension])
    _, finals = core.send_request(core.create_session(), {"provider": "acc"})
    assert finals[0]["content"] == "the answer"
    assert finals[0]["metadata"]["reasoning"] == "think first"


def test_tag_feature_tags_every_final_on_the_cold_path() -> None:
    mod = seed_module("EchoProvider", "TagFeature")
    core = LatticeCore()
    core.register_provider(mod.EchoProvider)
    core.register_feature(mod.TagFeature)
    _, finals = core.send_request(core.add_message(core.create_session(), "user", "x"), {"provider": "echo"})
    assert finals[0]["metadata"] == {"tag": True} and finals[0]["content"] == "Echo: x"


def test_marker_feature_completion_and_apply() -> None:
    mod = seed_module("MarkerFeature")
    core = LatticeCore()
    core.register_feature(mod.MarkerFeature)
    text = "remember this @tag:"
    [completion] = core.get_completions({}, text)
    assert completion["replacement"] == "@tag:important" and completion["start"] == len("remember this ")
    assert completion["display"] == "@tag:important" and completion["display_meta"]
    accepted = text[:completion["start"]] + completion["replacement"]
    assert core.apply_feature_completion({}, accepted, completion) == "[tagged:important] "
    assert core.get_completions({}, "no marker here") == []


def test_calculator_tool_through_agent_core() -> None:
    mod = seed_module("Calculator")
    core = LatticeCore()
    core.register_tool(mod.Calculator)
    [schema] = core.get_tool_schemas({})
    assert schema["function"]["name"] == "add"
    [msg] = core.execute_tool_calls([{"id": "c1", "function": {"name": "add", "arguments": '{"a": 2, "b": 40}'}}], {})
    assert msg == {"role": "tool", "content": "Result: 42", "tool_call_id": "c1",
                   "metadata": {"display": {"type": "text", "content": "Result: 42"}}}


def test_calculator_unchanged_in_tools_folder_is_called_by_the_model(nb: Path) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "calculator.py").write_text(block("Calculator"))  # agent_core.types import, unchanged
    reply_add = '{"thoughts": ["add"], "headline": "adding", "tool_name": "add", "tool_args": {"a": 2, "b": 3}}'
    reply_method = '{"thoughts": ["x"], "headline": "h", "tool_name": "calculator:add", "tool_args": {"a": 1, "b": 1}}'
    reply_file = '{"thoughts": ["x"], "headline": "h", "tool_name": "calculator", "tool_args": {"a": 5, "b": 5}}'
    agent = Agent(nb, model=[reply_add, reply_method, reply_file, answer("done")])
    turn = agent.ask("add numbers")
    assert [c.tool_result for c in turn.calls[:3]] == ["Result: 5", "Result: 2", "Result: 10"]
    assert turn.text == "done"
    assert "### calculator" in turn.calls[0].messages[0]["content"]  # the tool is described to the model


def test_registering_example_runs_with_only_its_import_lines_changed() -> None:
    """The seed's AgentCore snippet, with a loopback-free `openai_compatible` provider (the seed's echo example
    renamed) in place of the network one; the snippet's text is executed as written apart from the imports."""
    mod = seed_module("EchoProvider", "PrefixExtension", "TagFeature", "Calculator")

    class OpenAICompatibleProvider(mod.EchoProvider):
        name = "openai_compatible"

    snippet = registering_example()
    snippet = snippet.replace("from agent_core import AgentCore\n", "from a0nb.ext import LatticeCore as AgentCore\n")
    snippet = snippet.replace("from plugins.openai_provider import OpenAICompatibleProvider\n", "")
    namespace = {**vars(mod), "OpenAICompatibleProvider": OpenAICompatibleProvider}
    exec(compile(snippet, "<seed 004: registering>", "exec"), namespace)
    finals = namespace["finals"]
    assert finals[0]["content"] == "[EXT] Echo: Hello" and finals[0]["metadata"]["tag"] is True
    assert [m["role"] for m in namespace["session"].messages] == ["user", "assistant"]


def test_the_unchanged_examples_import_from_agent_core_types(nb: Path) -> None:
    """Placed in a profile's and a plugin's providers/ and features/ folders, the seed's files load unchanged."""
    for name in ("EchoProvider", "PrefixExtension", "TagFeature", "MarkerFeature", "Calculator", "MyStreamingExtension"):
        assert "from agent_core.types import" in block(name)
        assert "from a0nb.ext import" in with_ext_import(block(name))
    plugin = nb / "plugins" / "demo"
    (plugin / "providers").mkdir(parents=True)
    (plugin / "features").mkdir()
    (plugin / "plugin.yaml").write_text("name: demo\ntitle: Demo\n")
    (plugin / "providers" / "echo.py").write_text(block("EchoProvider"))
    (plugin / "providers" / "prefix.py").write_text(block("PrefixExtension"))
    (plugin / "features" / "tag.py").write_text(block("TagFeature"))
    agent = Agent(nb, model="echo:x")
    reply = asyncio.run(complete(agent.provider("chat"), MSGS, agent.model_config("chat"), extensions=[]))
    assert reply.content == "[EXT] Echo: Hello" and reply.metadata == {"tag": True}
    assert not [d for d in agent.diagnostics if d.severity == "error"], agent.diagnostics.text()


@pytest.mark.parametrize("name", ["EchoProvider", "MyProvider", "PrefixExtension", "MyStreamingExtension",
                                  "TagFeature", "MarkerFeature", "Calculator"])
def test_every_example_is_found_in_the_seed(name: str) -> None:
    code = block(name)
    assert f"class {name}(" in code and code.count("\nclass ") <= 1


def test_echo_provider_config_schema_default_fills_the_model() -> None:
    """The seed's EchoProvider declares `model` with default `echo-1`: a config without a model gets it."""
    mod = seed_module("EchoProvider")
    seen: list[dict[str, Any]] = []

    class Watched(mod.EchoProvider):
        def init(self, config: dict[str, Any]) -> dict[str, Any]:
            seen.append(config)
            return super().init(config)
    core = LatticeCore()
    core.register_provider(Watched)
    core.send_request(core.add_message(core.create_session(), "user", "x"), {"provider": "echo"})
    core.send_request(core.add_message(core.create_session(), "user", "x"), {"provider": "echo", "model": "echo-2"})
    assert [c["model"] for c in seen] == ["echo-1", "echo-2"]
