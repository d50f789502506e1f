"""Provider extensions: the bundled two (think tags, native tool calls) and their gating by provider tags,
discovery from `providers/` folders with same-file-name override, failures that name the file, native tool
schemas sent through litellm and replayed from a cassette, litellm's mock_response end to end through an agent."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from a0nb import Agent
from a0nb.errors import ModelError
from a0nb.providers.base import ModelConfig
from a0nb.providers.extension import CallPipeline, bundled_provider_extensions, provider_tags
from a0nb.providers.litellm_provider import LiteLLMProvider, _litellm
from a0nb.providers.registry import make_provider
from a0nb.providers.scripted import ScriptedProvider
from a0nb.providers.stream import complete
from a0nb.testing import answer, tool_reply

THINK = "_10_think_tags.ThinkTags"
NATIVE = "_20_native_tool_calls.NativeToolCalls"
MSGS = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]


def _active(provider: Any) -> list[str]:
    return CallPipeline(provider, ModelConfig(spec="x"), bundled_provider_extensions()).state["provider_extensions"]


class _PlainProvider:
    """A user provider written before tags existed: only `has_reasoning_channel`."""

    name = "plain"

    def __init__(self, channel: bool) -> None:
        self.has_reasoning_channel = channel

    def init(self, config: ModelConfig) -> dict[str, Any]:
        return {}

    def initialize_request(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> Any:
        return messages, state

    async def stream(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> AsyncIterator[str]:
        for piece in ("<thi", "nk>plan</th", "ink>", '{"tool_name": "response", "tool_args": {"text": "x"}}'):
            yield piece

    def process_chunk(self, chunk: str, state: dict[str, Any]) -> tuple[str, str]:
        state["partial"]["chunks"] += 1
        state["partial"]["content"].append(chunk)
        return "", chunk

    def finalize(self, state: dict[str, Any]) -> Any:
        from a0nb.providers.base import ModelReply
        return ModelReply(content="".join(state["partial"]["content"]))


class _NativeReasoning(_PlainProvider):
    """Sends reasoning on its own channel first, then text that opens with a tag."""

    def process_chunk(self, chunk: str, state: dict[str, Any]) -> tuple[str, str]:
        if state["partial"]["chunks"] == 0:
            state["partial"]["chunks"] += 1
            state["partial"]["reasoning"].append("from the channel")
            state["partial"]["content"].append(chunk)
            return "from the channel", chunk
        return super().process_chunk(chunk, state)

    def finalize(self, state: dict[str, Any]) -> Any:
        reply = super().finalize(state)
        reply.reasoning = "".join(state["partial"]["reasoning"])
        return reply


# ---------------------------------------------------------------- bundled extensions and gating


def test_bundled_extensions_load_in_file_order() -> None:
    found = bundled_provider_extensions()
    assert [e.name for e in found] == [THINK, NATIVE]
    assert all(e.path is not None and e.path.parent.name == "providers" and e.root_label == "bundled" for e in found)


def test_extensions_are_gated_by_provider_tags(nb: Path) -> None:
    (nb / "c.yaml").write_text("[]\n")
    assert _active(ScriptedProvider([answer("x")])) == [THINK]                # no reasoning channel, no tools
    assert _active(LiteLLMProvider("openai/gpt-4o-mini")) == [THINK, NATIVE]  # tags split unless the channel speaks
    assert _active(make_provider("replay:c.yaml", nb)) == [NATIVE]            # recorded replies are already split
    assert _active(_PlainProvider(channel=False)) == [THINK]
    assert _active(_PlainProvider(channel=True)) == [THINK]
    assert provider_tags(_PlainProvider(channel=True), ModelConfig(spec="x")) == {"reasoning"}


def test_think_tags_split_across_chunk_boundaries() -> None:
    reasoning: list[str] = []

    class Sink:
        async def reasoning(self, delta: str, full: str) -> None:
            reasoning.append(delta)

        async def response(self, delta: str, full: str) -> None:
            return None

    reply = asyncio.run(complete(_PlainProvider(channel=False), MSGS, ModelConfig(spec="x"), Sink()))
    assert reply.reasoning == "".join(reasoning) == "plan"
    assert json.loads(reply.content)["tool_args"] == {"text": "x"}
    assert reply.extensions == [THINK]
    # a provider with a reasoning channel that stays empty in this reply: split too (Agent Zero decides per reply)
    channel = asyncio.run(complete(_PlainProvider(channel=True), MSGS, ModelConfig(spec="x")))
    assert channel.reasoning == "plan" and channel.content.startswith('{"tool_name"')
    # reasoning on the channel: the tags in the text are left as they are
    native = asyncio.run(complete(_NativeReasoning(channel=True), MSGS, ModelConfig(spec="x")))
    assert native.reasoning == "from the channel" and native.content.startswith("<think>plan</think>")


def test_complete_with_an_empty_extension_list_runs_the_bare_provider() -> None:
    reply = asyncio.run(complete(_PlainProvider(channel=False), MSGS, ModelConfig(spec="x"), extensions=[]))
    assert reply.content.startswith("<think>") and reply.extensions == []


# ---------------------------------------------------------------- providers/ folders of the notebook

_COUNTING = '''
from a0nb.providers import ProviderExtension


class CountChunks(ProviderExtension):
    """Counts the chunks it saw and reports them in the reply's usage."""

    def process_chunk(self, chunk, deltas, state):
        state["seen"] = state.get("seen", 0) + 1
        return deltas

    def finalize(self, reply, state):
        reply.usage["chunks_seen"] = state.get("seen", 0)
        return reply
'''

_NO_SPLIT = '''
from a0nb.providers import ProviderExtension


class KeepThinkTags(ProviderExtension):
    """Overrides the bundled file of the same name: <think> stays in the reply text."""
'''


def test_notebook_extensions_are_discovered_and_override_bundled_by_file_name(nb: Path) -> None:
    (nb / "providers").mkdir()
    (nb / "providers" / "_50_count_chunks.py").write_text(_COUNTING)
    reply = "<think>first the plan</think>" + answer("done")
    agent = Agent(nb, model=[reply, reply])
    turn = agent.ask("go")
    record = turn.calls[0]
    assert record.provider_extensions == [THINK, "_50_count_chunks.CountChunks"]
    assert record.reasoning == "first the plan" and record.response == answer("done")
    assert record.usage["chunks_seen"] >= 2

    (nb / "providers" / "_10_think_tags.py").write_text(_NO_SPLIT)  # picked up by the next ask, no restart
    turn = agent.ask("again")
    assert turn.text == "done"
    assert turn.calls[0].reasoning == ""  # not split off any more (the early stop kept the JSON as the reply)
    found = {e.name: e for e in agent.provider_extensions()}
    assert "_10_think_tags.KeepThinkTags" in found and THINK not in found
    override = found["_10_think_tags.KeepThinkTags"]
    assert override.root_label == "notebook" and [p.parent.name for p in override.overrode] == ["providers"]


_BROKEN = '''
from a0nb.providers import ProviderExtension


class Explodes(ProviderExtension):
    def process_chunk(self, chunk, deltas, state):
        raise RuntimeError("boom in the hot path")
'''


def test_a_failing_extension_names_its_file_and_the_next_ask_works(nb: Path) -> None:
    (nb / "providers").mkdir()
    bad = nb / "providers" / "_30_explodes.py"
    bad.write_text(_BROKEN)
    agent = Agent(nb, model=[answer("never seen"), answer("after the fix")])
    with pytest.raises(ModelError) as info:
        agent.ask("hi")
    message = str(info.value)
    assert "_30_explodes.Explodes" in message and str(bad) in message and "process_chunk" in message
    assert "boom in the hot path" in message
    assert agent.calls[-1].error and "_30_explodes" in agent.calls[-1].error
    assert agent.history.validate() == []
    bad.unlink()
    assert agent.ask("again").text == "after the fix"  # the scripted reply of the abandoned call was used up


def test_a_providers_file_that_does_not_import_goes_to_diagnostics(nb: Path) -> None:
    (nb / "providers").mkdir()
    (nb / "providers" / "_40_typo.py").write_text("from a0nb.providers import ProviderExtension\nclass X(ProviderExtension)\n")
    agent = Agent(nb, model=[answer("still works")])
    assert agent.ask("hi").text == "still works"
    problems = [d for d in agent.diagnostics if "_40_typo.py" in str(d.path)]
    assert problems and problems[0].line == 2


# ---------------------------------------------------------------- native tool calls through litellm


def _tool_call_chunks(name: str, args: dict[str, Any], call_id: str) -> list[dict[str, Any]]:
    """An OpenAI-shaped stream: the call's id and name first, then its arguments in fragments, then usage."""
    text = json.dumps(args)
    head = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    chunks = [{"model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [head]}}]}]
    for i in range(0, len(text), 7):
        fragment = {"index": 0, "function": {"arguments": text[i:i + 7]}}
        chunks.append({"model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]})
    chunks.append({"model": "gpt-4o-mini", "choices": [],
                   "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59}})
    return chunks


class _FakeLiteLLM:
    """Stands in for `litellm.acompletion`: records each call's kwargs and streams the next scripted reply."""

    def __init__(self, replies: list[list[dict[str, Any]]]) -> None:
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    async def __call__(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        chunks = self.replies.pop(0)

        async def stream() -> AsyncIterator[dict[str, Any]]:
            for chunk in chunks:
                yield chunk
        return stream()


@pytest.fixture
def fake_litellm(monkeypatch: pytest.MonkeyPatch) -> Any:
    litellm = _litellm()

    def install(replies: list[list[dict[str, Any]]]) -> _FakeLiteLLM:
        fake = _FakeLiteLLM(replies)
        monkeypatch.setattr(litellm, "acompletion", fake)
        return fake
    return install


def _native_turn() -> list[list[dict[str, Any]]]:
    return [_tool_call_chunks("code_execution", {"runtime": "python", "code": "print(17 * 23)"}, "call_1"),
            _tool_call_chunks("response", {"text": "It is 391."}, "call_2")]


@pytest.mark.slow  # imports litellm (~3 s): left out of `make test-fast`
def test_native_tools_send_schemas_and_run_the_native_calls(nb: Path, fake_litellm: Any) -> None:
    fake = fake_litellm(_native_turn())
    agent = Agent(nb, model="openai/gpt-4o-mini", settings={"native_tools": True})
    turn = agent.ask("What is 17 * 23?")
    assert turn.text == "It is 391."
    sent = fake.calls[0]
    names = [t["function"]["name"] for t in sent["tools"]]
    assert names == sorted(agent.tools.available()) and "code_execution" in names and sent["tool_choice"] == "auto"
    schema = next(t for t in sent["tools"] if t["function"]["name"] == "code_execution")["function"]["parameters"]
    assert schema["required"] == ["runtime", "code"] and "code" in schema["properties"]
    first, second = turn.calls
    assert first.tool_request is not None and first.tool_request["tool_name"] == "code_execution"
    assert "391" in (first.tool_result or "")
    assert first.provider_extensions == [THINK, NATIVE] and first.usage["total_tokens"] == 59
    assert second.tool_request is not None and second.tool_request["tool_args"] == {"text": "It is 391."}
    assert agent.history.validate() == []


@pytest.mark.slow  # imports litellm (~3 s): left out of `make test-fast`
def test_without_native_tools_no_schemas_are_sent_but_native_calls_are_accepted(nb: Path, fake_litellm: Any) -> None:
    fake = fake_litellm(_native_turn())
    agent = Agent(nb, model="openai/gpt-4o-mini")
    assert agent.ask("What is 17 * 23?").text == "It is 391."
    assert all("tools" not in call and "tool_choice" not in call for call in fake.calls)


@pytest.mark.slow  # imports litellm (~3 s): left out of `make test-fast`
def test_native_tool_calls_record_and_replay_with_the_schemas_in_the_fingerprint(nb: Path, fake_litellm: Any) -> None:
    fake_litellm(_native_turn())
    recorder = Agent(nb, model="record:native.yaml:openai/gpt-4o-mini", settings={"native_tools": True})
    recorded = recorder.ask("What is 17 * 23?")
    entries = (nb / "native.yaml").read_text()
    assert "code_execution" in entries and "tools:" in entries

    replayer = Agent(nb, model="replay:native.yaml", settings={"native_tools": True})
    replayed = replayer.ask("What is 17 * 23?")
    assert replayed.text == recorded.text == "It is 391."
    assert [c.tool_request for c in replayed.calls] == [c.tool_request for c in recorded.calls]
    assert [(c.response, c.tool_result) for c in replayed.calls] == [(c.response, c.tool_result) for c in recorded.calls]

    without = Agent(nb, model="replay:native.yaml")
    with pytest.raises(ModelError) as info:
        without.ask("What is 17 * 23?")
    assert "-tools:" in str(info.value)  # the diff shows the schemas the recorded request carried


# ---------------------------------------------------------------- litellm's mock_response through an agent


@pytest.mark.slow  # imports litellm (~3 s): left out of `make test-fast`
def test_litellm_mock_response_end_to_end_through_the_agent(nb: Path) -> None:
    _litellm()
    # litellm's mock streams the text with its reasoning channel empty, as an OpenAI-compatible server of a thinking
    # model (ollama, vLLM) does: the tags are split off, as Agent Zero does for any provider (they were dropped before)
    reply = "<think>two and two make four</think>" + tool_reply("response", text="4")
    agent = Agent(nb, model="openai/gpt-4o-mini", settings={"model_kwargs": {"mock_response": reply, "max_tokens": 64}})
    turn = agent.ask("What is 2+2?")
    assert turn.text == "4"
    record = turn.calls[0]
    assert record.model.endswith("gpt-4o-mini") and record.usage["total_tokens"] > 0
    assert isinstance(record.cost, float) and record.latency and record.latency > 0
    assert record.provider_extensions == [THINK, NATIVE] and record.reasoning == "two and two make four"


def test_an_api_key_in_model_kwargs_is_refused(nb: Path) -> None:
    agent = Agent(nb, model="openai/gpt-4o-mini", settings={"model_kwargs": {"api_key": "sk-nope-nope-nope"}})
    with pytest.raises(Exception) as info:
        agent.ask("hi")
    assert "API keys are not taken from parameters" in str(info.value) and "sk-nope" not in str(info.value)


def test_a_plugin_ships_provider_extensions_in_its_providers_folder(nb: Path) -> None:
    plugin = nb / "plugins" / "chunk_counter"
    (plugin / "providers").mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: chunk_counter\n")
    (plugin / "providers" / "_50_count_chunks.py").write_text(_COUNTING)
    agent = Agent(nb, model=[answer("counted")])
    [found] = [e for e in agent.provider_extensions() if e.name == "_50_count_chunks.CountChunks"]
    assert found.root_label == "plugin chunk_counter"
    turn = agent.ask("go")
    assert turn.calls[0].usage["chunks_seen"] >= 1
    (nb / ".a0proj" / "plugins" / "chunk_counter").mkdir(parents=True)
    (nb / ".a0proj" / "plugins" / "chunk_counter" / ".toggle-0").write_text("")  # the plugin off: so is its extension
    agent.refresh()
    assert "_50_count_chunks.CountChunks" not in [e.name for e in agent.provider_extensions()]


def test_each_model_role_has_its_own_endpoint_key_variable_and_kwargs(nb: Path) -> None:
    agent = Agent(nb, model="openai/chat-model", utility_model="openai/utility-model", settings={
        "api_base": "http://127.0.0.1:8001/v1", "api_key_env": "CHAT_GATEWAY_KEY",
        "utility_api_base": "http://127.0.0.1:8002/v1", "utility_api_key_env": "UTILITY_GATEWAY_KEY",
        "model_kwargs": {"max_tokens": 64}, "utility_model_kwargs": {"max_tokens": 512}, "native_tools": True})
    chat, utility = agent.model_config("chat"), agent.model_config("utility")
    assert (chat.api_base, chat.api_key_env, chat.params["max_tokens"]) == (
        "http://127.0.0.1:8001/v1", "CHAT_GATEWAY_KEY", 64)
    assert (utility.api_base, utility.api_key_env, utility.params["max_tokens"]) == (
        "http://127.0.0.1:8002/v1", "UTILITY_GATEWAY_KEY", 512)
    assert chat.tools and utility.tools is None  # native tool schemas go to the chat model only


def test_which_specs_warm_litellm() -> None:
    from a0nb.providers.registry import litellm_model_of
    assert litellm_model_of("openai/gpt-4o-mini") == "openai/gpt-4o-mini"
    assert litellm_model_of("record:c.yaml:anthropic/claude-3-5-haiku") == "anthropic/claude-3-5-haiku"
    for other in ("scripted:r.yaml", "replay:c.yaml", "local:", "record:c.yaml:local:", "record:c.yaml", ""):
        assert litellm_model_of(other) is None, other
    assert litellm_model_of("mine:model", custom={"mine"}) is None
