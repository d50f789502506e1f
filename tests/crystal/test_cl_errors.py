"""Bad Crystal Lattice plugins get clear errors naming the file and the contract: a missing required method,
the wrong tuple shape, an exception in process_chunk, a providers/*.py that does not import (never litellm's
"LLM Provider NOT provided"), an unknown prefix (the known ones listed); history stays consistent."""
from __future__ import annotations

from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.errors import ConfigError, ModelError
from a0nb.ext import ContractError, LatticeCore, ProviderPlugin, ToolPlugin
from a0nb.testing import answer

GOOD = '''
from agent_core.types import ProviderPlugin


class Good(ProviderPlugin):
    name = "good"

    def init(self, config):
        return {}

    def call_api(self, native_messages, state):
        final = {"role": "assistant", "content": '{"tool_name": "response", "tool_args": {"text": "fine"}}'}
        return [], [final], [*native_messages, final], state
'''


def _files(nb: Path, **files: str) -> None:
    (nb / "providers").mkdir(exist_ok=True)
    for name, text in files.items():
        (nb / "providers" / f"{name}.py").write_text(text)


def test_a_provider_without_call_api_or_stream_api_is_reported_with_its_file_and_contract(nb: Path) -> None:
    _files(nb, lazy="from agent_core.types import ProviderPlugin\n\nclass Lazy(ProviderPlugin):\n"
                    "    name = 'lazy'\n    def init(self, config):\n        return {}\n")
    agent = Agent(nb, model="lazy:x")
    with pytest.raises(ConfigError) as info:
        agent.ask("hi")
    text = str(info.value)
    assert "lazy.py" in text and "ProviderPlugin contract" in text and "call_api" in text and "stream_api" in text
    [diag] = agent.diagnostics.of("provider")
    assert diag.path and diag.path.endswith("lazy.py") and "Lazy" in diag.message
    assert agent.history.validate() == []


def test_a_wrong_tuple_shape_names_the_method_and_the_contract_and_the_next_ask_works(nb: Path) -> None:
    bad = GOOD.replace("return [], [final], [*native_messages, final], state", "return [final], state")
    _files(nb, good=bad)
    agent = Agent(nb, model="good:x")
    with pytest.raises(ModelError) as info:
        agent.ask("hi")
    text = str(info.value)
    assert "good.py" in text and "Good.call_api (" in text and "returned a 2-tuple" in text
    assert "(partials, finals, natives, state)" in text
    assert agent.history.validate() == []
    _files(nb, good=GOOD)
    assert agent.ask("again").text == "fine"


def test_state_that_is_not_a_dict_is_refused() -> None:
    class NoState(ProviderPlugin):
        name = "nostate"

        def init(self, config):  # type: ignore[no-untyped-def]
            return None

        def call_api(self, native, state):  # type: ignore[no-untyped-def]
            return [], [], native, state
    core = LatticeCore()
    core.register_provider(NoState)
    with pytest.raises(ContractError, match=r"NoState\.init \(.*returned NoneType.*init\(config\) -> state"):
        core.send_request(core.create_session(), {"provider": "nostate"})


def test_an_extension_raising_in_process_chunk_names_its_file(nb: Path) -> None:
    _files(nb, good=GOOD, _10_boom=(
        "from agent_core.types import ProviderExtensionPlugin\n\nclass Boom(ProviderExtensionPlugin):\n"
        "    def init(self, config, state):\n        return state\n"
        "    def process_chunk(self, chunk, partials, finals, natives, state):\n        raise KeyError('oops')\n"))
    agent = Agent(nb, model="good:x")
    with pytest.raises(ModelError) as info:
        agent.ask("hi")
    text = str(info.value)
    assert "_10_boom.py" in text and "Boom.process_chunk (" in text and "raised KeyError" in text
    assert "process_chunk(native_chunk, partial_messages, final_messages, native_messages, state)" in text
    assert agent.calls[-1].error and "Boom" in agent.calls[-1].error
    assert agent.history.validate() == []


def test_a_providers_file_that_fails_to_import_never_falls_through_to_litellm(nb: Path) -> None:
    _files(nb, echo="from agent_core.types import ProviderPlugin\n\nclass Echo(ProviderPlugin)\n    name = 'echo'\n")
    agent = Agent(nb, model="echo:echo-1")
    with pytest.raises(ConfigError) as info:
        agent.ask("hi")
    text = str(info.value)
    assert "echo.py" in text and "SyntaxError" in text and "no provider named 'echo'" in text
    assert "LLM Provider NOT provided" not in text
    assert agent.history.validate() == []


def test_an_unknown_prefix_lists_the_known_ones(nb: Path) -> None:
    _files(nb, good=GOOD)
    agent = Agent(nb, model="nosuch:model")
    with pytest.raises(ConfigError) as info:
        agent.ask("hi")
    text = str(info.value)
    assert "unknown provider prefix 'nosuch'" in text
    for known in ("scripted:", "replay:", "record:", "local:", "good:"):
        assert known in text
    # vendor/model ids and OpenAI fine-tune ids still go to litellm
    from a0nb.providers.registry import litellm_model_of
    assert litellm_model_of("openai/gpt-4o-mini") == "openai/gpt-4o-mini"
    assert litellm_model_of("ft:gpt-4o-mini:org::id") == "ft:gpt-4o-mini:org::id"
    assert litellm_model_of("nosuch:model") is None


def test_registering_a_class_of_the_wrong_kind_or_without_a_name_is_refused(nb: Path) -> None:
    agent = Agent(nb, model=[answer("x")])
    with pytest.raises(ContractError, match="not a ProviderPlugin subclass"):
        agent.register_provider(dict)

    class Nameless(ProviderPlugin):
        def init(self, config):  # type: ignore[no-untyped-def]
            return {}

        def call_api(self, native, state):  # type: ignore[no-untyped-def]
            return [], [], native, state
    with pytest.raises(ContractError, match="has no `name`"):
        agent.register_provider(Nameless)
    with pytest.raises(ContractError, match="not a FeaturePlugin subclass"):
        agent.register_feature(Nameless)


def test_a_tool_plugin_without_execute_tool_is_a_diagnostic_not_a_crash(nb: Path) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "half.py").write_text("from agent_core.types import ToolPlugin\n\nclass Half(ToolPlugin):\n"
                                          "    def get_tool_schemas(self, state):\n        return []\n")
    agent = Agent(nb, model=[answer("still works")])
    assert agent.ask("x").text == "still works"
    assert agent.tools.resolve("half") is None
    diags = [d.message for d in agent.diagnostics.of("tool") if d.path and d.path.endswith("half.py")]
    assert any("ToolPlugin contract" in m and "execute_tool" in m for m in diags), diags


def test_a_tool_plugin_that_breaks_at_run_time_goes_back_to_the_model(nb: Path) -> None:
    class Flaky(ToolPlugin):
        def get_tool_schemas(self, state):  # type: ignore[no-untyped-def]
            return [{"type": "function", "function": {"name": "flaky"}}]

        def execute_tool(self, tool_name, payload, state, **kw):  # type: ignore[no-untyped-def]
            raise ValueError("disk full")
    agent = Agent(nb, model=['{"tool_name": "flaky", "tool_args": {}}', answer("recovered")])
    agent.register_tool(Flaky)
    turn = agent.ask("x")
    assert "disk full" in (turn.calls[0].tool_result or "") and turn.text == "recovered"
