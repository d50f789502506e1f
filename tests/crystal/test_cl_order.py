"""The seed's default execution order, walked step by step: tool schemas, the init chain, core→native, request
setup, the hot path per chunk (provider then extensions; features never), the cold path, native→core.
The same LatticeRun serves AgentCore and an Agent's `name:model` spec; both are checked."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from a0nb import Agent
from a0nb.ext import FeaturePlugin, LatticeCore, ProviderExtensionPlugin, ProviderPlugin, ToolPlugin
from a0nb.providers.stream import complete
from a0nb.testing import answer
from conftest import chunks


def spies(log: list[str], stream: list[Any]) -> tuple[type, type, type, type, type]:
    class P(ProviderPlugin):
        name = "spy"

        def init(self, config: dict[str, Any]) -> dict[str, Any]:
            log.append("provider.init")
            return {"config": config, "tools_seen": [t["function"]["name"] for t in config.get("tools", [])]}

        def to_native_messages(self, messages: Any, state: Any) -> Any:
            log.append("provider.to_native_messages")
            return super().to_native_messages(messages, state)

        def from_native_messages(self, native: Any, state: Any) -> Any:
            log.append("provider.from_native_messages")
            return super().from_native_messages(native, state)

        def initialize_request(self, native: Any, state: Any) -> Any:
            log.append("provider.initialize_request")
            return native, state

        def stream_api(self, native: Any, state: Any) -> Any:
            log.append("provider.stream_api")
            yield from stream

        def process_chunk(self, chunk: Any, native: Any, state: Any) -> Any:
            log.append("provider.process_chunk")
            return super().process_chunk(chunk, native, state)

        def finalize(self, native: Any, state: Any) -> Any:
            log.append("provider.finalize")
            return super().finalize(native, state)

    def extension(tag: str) -> type:
        class E(ProviderExtensionPlugin):
            def init(self, config: Any, state: Any) -> Any:
                log.append(f"{tag}.init")
                return state

            def to_native_messages(self, messages: Any, native: Any) -> Any:
                log.append(f"{tag}.to_native_messages")
                return native

            def from_native_messages(self, native: Any, messages: Any) -> Any:
                log.append(f"{tag}.from_native_messages")
                return messages

            def initialize_request(self, native: Any, state: Any) -> Any:
                log.append(f"{tag}.initialize_request")
                return native, state

            def process_chunk(self, chunk: Any, partials: Any, finals: Any, native: Any, state: Any) -> Any:
                log.append(f"{tag}.process_chunk")
                return partials, finals, native, state

            def finalize(self, finals: Any, native: Any, state: Any) -> Any:
                log.append(f"{tag}.finalize")
                return finals, native, state
        E.__name__ = tag
        return E

    class F(FeaturePlugin):
        def init(self, config: Any, state: Any) -> Any:
            log.append("feature.init")
            return state

        def to_native_messages(self, messages: Any, native: Any) -> Any:
            log.append("feature.to_native_messages")
            return native

        def from_native_messages(self, native: Any, messages: Any) -> Any:
            log.append("feature.from_native_messages")
            return messages

        def initialize_request(self, native: Any, state: Any) -> Any:
            log.append("feature.initialize_request")
            return native, state

        def finalize(self, finals: Any, native: Any, state: Any) -> Any:
            log.append("feature.finalize")
            return finals, native, state

    class T(ToolPlugin):
        def init(self, config: Any) -> Any:
            log.append("tool.init")
            return {}

        def get_tool_schemas(self, state: Any) -> Any:
            log.append("tool.get_tool_schemas")
            return [{"type": "function", "function": {"name": "noop", "parameters": {"type": "object"}}}]

        def execute_tool(self, tool_name: Any, payload: Any, state: Any, **kw: Any) -> Any:
            return {"success": True, "result": None}

    return P, extension("ext1"), extension("ext2"), F, T


def expected(n_chunks: int, tools: bool) -> list[str]:
    chain = ["provider", "ext1", "ext2", "feature"]
    steps = ["tool.init", "tool.get_tool_schemas"] if tools else []
    steps += [f"{c}.init" for c in chain]
    steps += [f"{c}.to_native_messages" for c in chain]
    steps += [f"{c}.initialize_request" for c in chain]
    steps += ["provider.stream_api"]
    steps += ["provider.process_chunk", "ext1.process_chunk", "ext2.process_chunk"] * n_chunks
    steps += [f"{c}.finalize" for c in chain]
    steps += [f"{c}.from_native_messages" for c in chain]
    return steps


def test_agent_core_runs_the_seed_order_step_by_step() -> None:
    log: list[str] = []
    stream = chunks("streamed text", size=4)
    P, E1, E2, F, T = spies(log, stream)
    core = LatticeCore()
    core.register_provider(P, extensions=[E1, E2])
    core.register_feature(F)
    core.register_tool(T)
    _, finals = core.send_request(core.add_message(core.create_session(), "user", "go"), {"provider": "spy"})
    assert finals[0]["content"] == "streamed text"
    assert log == expected(len(stream), tools=True)


def test_an_agent_runs_the_same_order_for_its_model_call(nb: Path) -> None:
    log: list[str] = []
    reply = answer("ordered")
    stream = chunks(reply, size=len(reply) // 3 + 1)
    P, E1, E2, F, _ = spies(log, stream)
    agent = Agent(nb, model="spy:any")
    agent.register_provider(P, extensions=[E1, E2])
    agent.register_feature(F)
    assert agent.ask("go").text == "ordered"
    # the early stop at the complete tool request ends the stream after the last chunk; the cold path still runs
    assert log == expected(len(stream), tools=False)
    assert agent.calls[0].model == "spy:any"


def test_tool_schemas_reach_the_provider_config_when_native_tools_are_on(nb: Path) -> None:
    log: list[str] = []
    P, E1, E2, F, _ = spies(log, chunks(answer("x")))
    seen: dict[str, Any] = {}

    class Watching(P):  # type: ignore[misc, valid-type]
        def init(self, config: dict[str, Any]) -> dict[str, Any]:
            seen.update(config)
            return super().init(config)
    agent = Agent(nb, model="spy:m", settings={"native_tools": True})
    agent.register_provider(Watching)
    asyncio.run(complete(agent.provider("chat"), [{"role": "user", "content": "u"}], agent.model_config("chat"),
                         extensions=[]))
    names = [t["function"]["name"] for t in seen["tools"]]
    assert "response" in names and seen["provider"] == "spy" and seen["model"] == "m"


def test_features_are_never_called_per_chunk() -> None:
    log: list[str] = []
    P, E1, E2, F, _ = spies(log, chunks("a b c d e f", size=1))
    core = LatticeCore()
    core.register_provider(P)
    core.register_feature(F)
    core.send_request(core.create_session(), {"provider": "spy"})
    hot = log[log.index("provider.stream_api") + 1:log.index("provider.finalize")]
    assert hot and set(hot) == {"provider.process_chunk"}
