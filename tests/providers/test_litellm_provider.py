"""LiteLLMProvider: chunk folding from recorded litellm streams, complete() end to end with litellm's
mock_response, fault classification, retry-before-first-chunk, key handling, lazy import, .env loading."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from a0nb.diagnostics import Diagnostics
from a0nb.files.dotenv import load_dotenv
from a0nb.errors import ModelError
from a0nb.providers.base import ContextWindowExceeded, ModelConfig, StreamBroken, TransientModelError
from a0nb.providers.stream import complete
from a0nb.providers.extension import CallPipeline, bundled_provider_extensions
from a0nb.providers.faults import classify, is_provider_error, key_env_var, redact
from a0nb.providers.litellm_provider import LiteLLMProvider, _litellm

pytestmark = pytest.mark.slow  # real litellm / local model: left out of `make test-fast`

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
MSGS = [{"role": "system", "content": "You are a test."}, {"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def litellm() -> Any:
    return _litellm()


def _fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _fold(provider: LiteLLMProvider, chunks: list[Any], config: ModelConfig | None = None) -> tuple[str, str, Any]:
    """Recorded chunks through the provider and the bundled provider extensions, as `complete` runs them."""
    pipeline = CallPipeline(provider, config or ModelConfig(spec=provider.spec), bundled_provider_extensions())
    pipeline.request(MSGS)
    reasoning, content = [], []
    for chunk in chunks:
        r, c = pipeline.chunk(chunk)
        reasoning.append(r)
        content.append(c)
    return "".join(reasoning), "".join(content), pipeline.reply(("".join(reasoning), "".join(content)), False)


class Sink:
    def __init__(self) -> None:
        self.reasoning_deltas: list[str] = []
        self.response_deltas: list[str] = []

    async def reasoning(self, delta: str, full: str) -> None:
        self.reasoning_deltas.append(delta)

    async def response(self, delta: str, full: str) -> str | None:
        self.response_deltas.append(delta)
        return None


def _sink() -> Sink:
    return Sink()


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _sse_client(wire: list[dict[str, Any]] | None = None, status: int = 200, body: str | None = None,
                exc: Exception | None = None) -> Any:
    import openai

    def handler(request: httpx.Request) -> httpx.Response:
        if exc is not None:
            raise exc
        if body is not None:
            return httpx.Response(status, json=json.loads(body))
        text = "".join(f"data: {json.dumps(c)}\n\n" for c in wire or []) + "data: [DONE]\n\n"
        return httpx.Response(status, headers={"content-type": "text/event-stream"}, content=text.encode())

    return openai.AsyncOpenAI(api_key="sk-test-not-a-real-key",
                              http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))


# ---------------------------------------------------------------- recorded chunks -> process_chunk/finalize


def test_text_chunks_fold_into_content_and_usage() -> None:
    chunks = _fixture("text_stream.json")["chunks"]
    reasoning, content, reply = _fold(LiteLLMProvider("openai/gpt-4o-mini"), chunks)
    assert (reasoning, content) == ("", "hello streaming world")
    assert reply.content == "hello streaming world" and reply.reasoning == "" and reply.tool_calls == []
    assert reply.usage["prompt_tokens"] == 17 and reply.usage["completion_tokens"] == 3  # the recorded usage chunk
    assert reply.chunks == len(chunks) and reply.model == "gpt-4o-mini"


def test_reasoning_and_tool_call_fragments_are_joined_by_index() -> None:
    chunks = _fixture("reasoning_tools_stream.json")["chunks"]
    reasoning, content, reply = _fold(LiteLLMProvider("openai/gpt-4o-mini"), chunks)
    assert reasoning == reply.reasoning == "The user wants a number."
    assert content == reply.content == "Computing."
    assert [c["id"] for c in reply.tool_calls] == ["call_a", "call_b"]
    assert [c["function"]["name"] for c in reply.tool_calls] == ["code_execution", "response"]
    assert json.loads(reply.tool_calls[0]["function"]["arguments"]) == {"runtime": "python", "code": "print(17*23)"}
    assert json.loads(reply.tool_calls[1]["function"]["arguments"]) == {"text": "391"}
    assert all(c["type"] == "function" for c in reply.tool_calls)
    assert reply.usage["prompt_tokens"] == 12 and reply.usage["total_tokens"] == 19


def test_litellm_chunk_objects_fold_like_dicts_and_get_a_cost(litellm: Any) -> None:
    raw = _fixture("reasoning_tools_stream.json")["chunks"]
    objects = [litellm.ModelResponseStream(**c) for c in raw]
    from_dicts = _fold(LiteLLMProvider("openai/gpt-4o-mini"), raw)[2]
    from_objects = _fold(LiteLLMProvider("openai/gpt-4o-mini"), objects)[2]
    for field in ("content", "reasoning", "tool_calls"):
        assert getattr(from_objects, field) == getattr(from_dicts, field)
    assert from_objects.usage["completion_tokens"] == 7
    assert from_objects.cost == from_objects.usage["cost"]  # litellm priced its own usage chunk


def test_cost_from_the_price_table_when_usage_has_no_cost(litellm: Any) -> None:
    raw = _fixture("reasoning_tools_stream.json")["chunks"]
    for chunk in raw:
        (chunk.get("usage") or {}).pop("cost", None)
    reply = _fold(LiteLLMProvider("openai/gpt-4o-mini"), [litellm.ModelResponseStream(**c) for c in raw])[2]
    # gpt-4o-mini in litellm's bundled table: $0.15 / M prompt tokens, $0.60 / M completion tokens
    assert reply.cost == pytest.approx(12 * 0.15e-6 + 7 * 0.6e-6)


def test_cost_is_none_for_an_unpriced_model(litellm: Any) -> None:
    raw = [dict(c, model="no-such-model-xyz") for c in _fixture("text_stream.json")["chunks"]]
    for chunk in raw:
        (chunk.get("usage") or {}).pop("cost", None)  # litellm's mock prices its own usage chunk
    reply = _fold(LiteLLMProvider("openai/no-such-model-xyz"), raw)[2]
    assert reply.content == "hello streaming world" and reply.cost is None


def test_finalize_without_usage_chunk_still_reports_usage(litellm: Any) -> None:
    raw = [c for c in _fixture("text_stream.json")["chunks"] if c.get("choices")]
    reply = _fold(LiteLLMProvider("openai/gpt-4o-mini"), [litellm.ModelResponseStream(**c) for c in raw])[2]
    assert reply.usage.get("completion_tokens", 0) > 0  # counted by litellm's stream_chunk_builder
    assert isinstance(reply.cost, float) and reply.cost > 0


# ---------------------------------------------------------------- complete() end to end


def test_complete_with_mock_response_streams_through_the_sink(litellm: Any) -> None:
    sink = _sink()
    config = ModelConfig(spec="openai/gpt-4o-mini", params={"mock_response": "hello from the mock model"})
    reply = _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, config, sink))
    assert reply.content == "hello from the mock model"
    assert "".join(sink.response_deltas) == reply.content and len(sink.response_deltas) > 3
    assert reply.usage["total_tokens"] > 0 and isinstance(reply.cost, float)
    assert reply.model == "gpt-4o-mini" and reply.latency > 0 and not reply.stopped_early


def test_complete_over_the_openai_wire_with_reasoning_and_tools(litellm: Any) -> None:
    """The same SSE bytes an OpenAI-compatible server sends, through the real SDK and litellm (no network)."""
    sys.path.insert(0, str(FIXTURES))
    try:
        from make_litellm_chunks import WIRE  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(FIXTURES))
    sink = _sink()
    config = ModelConfig(spec="openai/gpt-4o-mini", params={"client": _sse_client(WIRE)})
    reply = _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, config, sink))
    assert "".join(sink.reasoning_deltas) == reply.reasoning == "The user wants a number."
    assert reply.content == "Computing."
    assert [c["function"]["name"] for c in reply.tool_calls] == ["code_execution", "response"]
    assert reply.usage["prompt_tokens"] == 12


def test_private_params_are_not_sent(litellm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    real = litellm.acompletion

    async def spy(**kwargs: Any) -> Any:
        seen.update(kwargs)
        return await real(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", spy)
    config = ModelConfig(spec="openai/gpt-4o-mini", params={"mock_response": "ok", "temperature": 0.2,
                                                             "_secret_values": ["hunter2hunter2"]})
    _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, config))
    assert seen["temperature"] == 0.2 and "_secret_values" not in seen
    assert seen["stream"] is True and seen["stream_options"] == {"include_usage": True}


# ---------------------------------------------------------------- faults


def _fault(litellm: Any, name: str) -> Any:
    kwargs = {"message": f"mock {name}", "llm_provider": "openai", "model": "gpt-4o-mini"}
    return getattr(litellm, name)(**kwargs)


@pytest.mark.parametrize("mock, expected", [
    ("litellm.RateLimitError", TransientModelError),
    ("litellm.InternalServerError", TransientModelError),
    ("litellm.ContextWindowExceededError", ContextWindowExceeded),
    ("Timeout", TransientModelError),
    ("ServiceUnavailableError", TransientModelError),
    ("APIConnectionError", TransientModelError),
    ("RateLimitError", TransientModelError),
    ("ContextWindowExceededError", ContextWindowExceeded),
    ("BadRequestError", ModelError),
    ("AuthenticationError", ModelError),
])
def test_each_litellm_fault_maps_to_its_class(litellm: Any, mock: str, expected: type) -> None:
    mock_response: Any = mock if mock.startswith("litellm.") else _fault(litellm, mock)
    config = ModelConfig(spec="openai/gpt-4o-mini", retries=0, params={"mock_response": mock_response})
    with pytest.raises(ModelError) as info:
        _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, config))
    assert type(info.value) is expected
    assert "openai/gpt-4o-mini" in str(info.value)


def test_connection_error_on_the_wire_is_transient(litellm: Any) -> None:
    client = _sse_client(exc=httpx.ConnectError("[Errno -2] Name or service not known"))
    config = ModelConfig(spec="openai/gpt-4o-mini", retries=0, params={"client": client})
    with pytest.raises(TransientModelError):
        _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, config))


def test_http_401_names_the_env_var_and_hides_the_key(litellm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-live-abcdefghijklmnop1234"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {key}", "type": "invalid_request_error",
                                 "code": "invalid_api_key"}})
    config = ModelConfig(spec="openai/gpt-4o-mini", retries=0, params={"client": _sse_client(status=401, body=body)})
    with pytest.raises(ModelError) as info:
        _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, config))
    assert type(info.value) is ModelError
    assert "OPENAI_API_KEY" in str(info.value) and key not in str(info.value)


def test_missing_openai_key_is_an_auth_error_naming_the_var(litellm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # litellm reports this as InternalServerError (500) "Missing credentials": it must not be retried
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = ModelConfig(spec="openai/gpt-4o-mini", retries=0)
    with pytest.raises(ModelError) as info:
        _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, config))
    assert type(info.value) is ModelError and "OPENAI_API_KEY" in str(info.value)


@pytest.mark.parametrize("model, var", [("anthropic/claude-3-5-haiku-20241022", "ANTHROPIC_API_KEY"),
                                        ("openai/gpt-4o-mini", "OPENAI_API_KEY"),
                                        ("gpt-4o-mini", "OPENAI_API_KEY"),
                                        ("groq/llama3-8b-8192", "GROQ_API_KEY")])
def test_auth_message_names_the_provider_env_var(litellm: Any, monkeypatch: pytest.MonkeyPatch, model: str, var: str) -> None:
    monkeypatch.delenv(var, raising=False)
    exc = litellm.AuthenticationError(message="Missing API Key", llm_provider=model.split("/")[0], model=model)
    error = classify(exc, model)
    assert type(error) is ModelError and var in str(error) and ".env" in str(error)
    assert key_env_var(model, "MY_GATEWAY_KEY") == "MY_GATEWAY_KEY"


def test_classify_without_litellm_types() -> None:
    assert type(classify(ConnectionResetError("reset"), "m")) is TransientModelError
    assert type(classify(TimeoutError("slow"), "m")) is TransientModelError
    assert is_provider_error(ConnectionResetError()) and not is_provider_error(ValueError("bug"))
    assert key_env_var("mistral/mistral-large") == "MISTRAL_API_KEY"
    assert "OPENAI_API_KEY" in key_env_var("somebody/unknown")


def test_redact_drops_env_keys_and_key_shaped_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_API_KEY", "acme-0123456789abcdef")
    text = redact("bad key acme-0123456789abcdef and sk-proj-ABCDEFGHIJKLMNOP here")
    assert "0123456789abcdef" not in text and "ABCDEFGHIJKLMNOP" not in text
    assert "<redacted:ACME_API_KEY>" in text


def test_a_bug_in_the_call_propagates_unclassified(litellm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(**kwargs: Any) -> Any:
        raise KeyError("our own bug")

    monkeypatch.setattr(litellm, "acompletion", broken)
    with pytest.raises(KeyError):
        _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, ModelConfig(spec="x", retries=2, backoff=0)))


# ---------------------------------------------------------------- retries


def test_transient_error_before_the_first_chunk_is_retried(litellm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    real, calls = litellm.acompletion, []

    async def flaky(**kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise _fault(litellm, "RateLimitError")
        return await real(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", flaky)
    config = ModelConfig(spec="openai/gpt-4o-mini", retries=2, backoff=0, params={"mock_response": "second time"})
    reply = _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, config))
    assert reply.content == "second time" and len(calls) == 2


def test_retries_are_bounded(litellm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    async def always(**kwargs: Any) -> Any:
        calls.append(1)
        raise _fault(litellm, "ServiceUnavailableError")

    monkeypatch.setattr(litellm, "acompletion", always)
    with pytest.raises(TransientModelError):
        _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, ModelConfig(spec="x", retries=2, backoff=0)))
    assert len(calls) == 3


def test_error_after_the_first_chunk_is_not_retried(litellm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [litellm.ModelResponseStream(**c) for c in _fixture("text_stream.json")["chunks"][:2]]
    calls = []

    async def cut(**kwargs: Any) -> Any:
        calls.append(1)

        async def gen() -> Any:
            for chunk in chunks:
                yield chunk
            raise _fault(litellm, "InternalServerError")
        return gen()

    monkeypatch.setattr(litellm, "acompletion", cut)
    with pytest.raises(StreamBroken) as info:
        _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, ModelConfig(spec="x", retries=3, backoff=0)))
    assert len(calls) == 1 and info.value.partial == "hello "


# ---------------------------------------------------------------- keys


def test_key_comes_from_the_named_env_var_and_stays_out_of_the_request(litellm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "gw-9f8e7d6c5b4a39281716"
    monkeypatch.setenv("MY_GATEWAY_KEY", key)
    seen: dict[str, Any] = {}
    real = litellm.acompletion

    async def spy(**kwargs: Any) -> Any:
        seen.update(kwargs)
        return await real(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", spy)
    provider = LiteLLMProvider("openai/my-model")
    config = ModelConfig(spec="openai/my-model", api_key_env="MY_GATEWAY_KEY", api_base="http://127.0.0.1:9/v1",
                         params={"mock_response": "ok"})
    state = provider.init(config)
    native, state = provider.initialize_request(MSGS, state)

    async def drain() -> None:
        async for chunk in provider.stream(native, state):
            provider.process_chunk(chunk, state)

    _run(drain())
    assert seen["api_key"] == key and seen["api_base"] == "http://127.0.0.1:9/v1"
    assert key not in repr(state["request"]) and key not in repr({k: v for k, v in state.items() if k != "partial"})
    assert provider.finalize(state).content == "ok"


def test_unset_api_key_env_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOPE_API_KEY", raising=False)
    config = ModelConfig(spec="openai/x", api_key_env="NOPE_API_KEY", retries=0, params={"mock_response": "ok"})
    with pytest.raises(ModelError, match="NOPE_API_KEY"):
        _run(complete(LiteLLMProvider("openai/x"), MSGS, config))


# ---------------------------------------------------------------- lazy import


def _python(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_and_construction_do_not_import_litellm() -> None:
    code = ("import sys, a0nb\nfrom pathlib import Path\n"
            "from a0nb.providers.base import ModelConfig\n"
            "from a0nb.providers.litellm_provider import LiteLLMProvider\n"
            "from a0nb.providers import cassette, faults, local\nimport a0nb.files.dotenv\n"
            "from a0nb.providers.registry import make_provider\n"
            "p = LiteLLMProvider('openai/gpt-4o-mini'); s = p.init(ModelConfig(spec='openai/gpt-4o-mini'))\n"
            "p.initialize_request([{'role': 'user', 'content': 'hi'}], s)\n"
            "make_provider('anthropic/claude-3-5-haiku-20241022', Path('.'))\n"
            "faults.classify(ConnectionResetError('x'), 'openai/gpt-4o-mini')\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'openai', 'xllamacpp')))")
    assert _python(code) == "[]"


def test_warm_up_loads_the_tokenizer_the_first_streamed_call_would_load() -> None:
    code = ("import tiktoken.registry as reg\n"
            "from a0nb.providers.litellm_provider import warm_import_in_background, _LOADER\n"
            "from a0nb.providers.litellm_provider import _TOKENIZERS, _litellm\n"
            "warm_import_in_background(model='openai/gpt-4o-mini')\n"
            "_LOADER.thread.join(60)\n"
            "print(sorted(getattr(reg, 'ENCODINGS', {})), _TOKENIZERS.load_while_waiting(_litellm(), 'openai/gpt-4o-mini'))")
    out = _python(code)
    assert "o200k_base" in out  # gpt-4o-mini's encoding, loaded offline from litellm's bundled files
    assert out.endswith(" None")  # the first call to the model then starts no loader


def _fresh_tokenizers(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[str]]:
    """A0nb's record of loaded tokenizers, empty, and the loads it starts (recorded, not made)."""
    from a0nb.providers import litellm_provider
    tokenizers = litellm_provider._Tokenizers()
    monkeypatch.setattr(litellm_provider, "_TOKENIZERS", tokenizers)
    loads: list[str] = []
    monkeypatch.setattr(tokenizers, "load", lambda module, model: loads.append(model))
    return tokenizers, loads


def test_the_first_call_to_a_model_loads_its_tokenizer_while_the_provider_thinks(litellm: Any,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm prices the prompt as a streamed reply starts, and the first time that loads the model's tokenizer
    (~0.5 s). The first call to a model loads it while the process waits for the provider (idle: the request is
    out), once; later calls start nothing."""
    tokenizers, loads = _fresh_tokenizers(monkeypatch)
    wire = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
             "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}]
    import openai

    def handler(request: httpx.Request) -> httpx.Response:
        time.sleep(0.5)  # the provider thinking: nothing runs in this process meanwhile
        text = "".join(f"data: {json.dumps(c)}\n\n" for c in wire) + "data: [DONE]\n\n"
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=text.encode())

    client = openai.AsyncOpenAI(api_key="sk-test-not-a-real-key",
                                http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    config = ModelConfig(spec="openai/gpt-4o-mini", params={"client": client})
    for _ in range(2):
        assert _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, config)).content == "hi"
    assert loads == ["openai/gpt-4o-mini"]  # once, for the model as a0nb names it, during the first wait
    assert tokenizers.load_while_waiting(litellm, "openai/gpt-4o-mini") is None
    loaders = [t for t in threading.enumerate() if t.name == "a0nb-litellm-tokenizer"]
    for t in loaders:
        t.join(10)
    assert not [t for t in loaders if t.is_alive()]  # the loader ended with its load


def test_a_reply_that_comes_at_once_leaves_the_tokenizer_to_litellm(litellm: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """No idle moment before the reply (mock_response): litellm loads the tokenizer as it prices the reply, and the
    model counts as loaded (no loader on later calls)."""
    tokenizers, loads = _fresh_tokenizers(monkeypatch)
    config = ModelConfig(spec="openai/gpt-4o-mini", params={"mock_response": "ok"})
    assert _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, config)).content == "ok"
    assert loads == [] and "openai/gpt-4o-mini" in tokenizers.models


def test_a_call_that_fails_before_its_reply_leaves_the_tokenizer_to_the_next(litellm: Any,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    tokenizers, loads = _fresh_tokenizers(monkeypatch)

    async def refuse(**kwargs: Any) -> Any:
        raise litellm.AuthenticationError(message="no key", llm_provider="openai", model="gpt-4o-mini")

    monkeypatch.setattr(litellm, "acompletion", refuse)
    with pytest.raises(ModelError):
        _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, ModelConfig(spec="openai/gpt-4o-mini")))
    assert loads == [] and "openai/gpt-4o-mini" not in tokenizers.models


def test_warm_import_configures_litellm_once() -> None:
    code = ("import os, sys\nfrom a0nb.providers.litellm_provider import warm_import_in_background, _LOADER, _litellm\n"
            "warm_import_in_background(); warm_import_in_background()\n"
            "t = _LOADER.thread; t.join(60)\n"
            "m = _litellm()\n"
            "print(t.daemon, 'litellm' in sys.modules, m.suppress_debug_info, "
            "os.environ['LITELLM_LOCAL_MODEL_COST_MAP'], m is sys.modules['litellm'])")
    assert _python(code) == "True True True True True"


# ---------------------------------------------------------------- .env


def test_load_dotenv_sets_only_unset_names(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("# keys\nOPENAI_API_KEY=sk-from-file-1234567\nexport ALREADY=file\n"
                                   "QUOTED=\"two words\"\nbroken line\n", encoding="utf-8")
    env = {"ALREADY": "shell"}
    diagnostics = Diagnostics()
    loaded = load_dotenv(tmp_path, diagnostics=diagnostics, environ=env)
    assert loaded == ["OPENAI_API_KEY", "QUOTED"]
    assert env == {"ALREADY": "shell", "OPENAI_API_KEY": "sk-from-file-1234567", "QUOTED": "two words"}
    problems = list(diagnostics)
    assert len(problems) == 1 and problems[0].line == 5 and "sk-from-file" not in str(problems[0])


def test_load_dotenv_missing_file_and_real_environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_dotenv(tmp_path) == []
    monkeypatch.delenv("A0NB_TEST_DOTENV_VAR", raising=False)
    (tmp_path / ".env").write_text("A0NB_TEST_DOTENV_VAR=1\n", encoding="utf-8")
    try:
        assert load_dotenv(tmp_path) == ["A0NB_TEST_DOTENV_VAR"] and os.environ["A0NB_TEST_DOTENV_VAR"] == "1"
    finally:
        os.environ.pop("A0NB_TEST_DOTENV_VAR", None)


def test_api_key_as_a_parameter_is_refused() -> None:
    from a0nb.errors import ConfigError
    with pytest.raises(ConfigError, match="environment variable"):
        LiteLLMProvider("openai/x").init(ModelConfig(spec="openai/x", params={"api_key": "sk-should-not-be-here"}))


def test_early_stop_closes_the_litellm_stream(litellm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    closed: list[bool] = []
    real = litellm.acompletion

    async def spy(**kwargs: Any) -> Any:
        stream = await real(**kwargs)
        original = stream.aclose

        async def aclose() -> None:
            closed.append(True)
            await original()
        stream.aclose = aclose
        return stream

    class StopAfterHello(Sink):
        async def response(self, delta: str, full: str) -> str | None:
            return full if "hello" in full else None

    monkeypatch.setattr(litellm, "acompletion", spy)
    config = ModelConfig(spec="openai/gpt-4o-mini", params={"mock_response": "hello there, a long reply follows"})
    reply = _run(complete(LiteLLMProvider("openai/gpt-4o-mini"), MSGS, config, StopAfterHello()))
    assert reply.stopped_early and reply.content.startswith("hello") and len(reply.content) < 12
    assert closed == [True]
