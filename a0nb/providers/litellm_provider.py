"""The litellm provider, and the only module in a0nb that imports litellm (lazily: it takes ~5 s).
Streams with usage, folds text and reasoning per chunk, prices the reply once at the end. Native tool-call
fragments are folded by the bundled `native_tool_calls` provider extension."""
from __future__ import annotations

import asyncio
import importlib
import os
import threading
import time
from typing import Any, AsyncIterator, Callable

from a0nb.errors import ConfigError, ModelError
from a0nb.providers.foreground import FOREGROUND, Foreground
from a0nb.providers.base import ModelConfig, ModelReply, new_partial
from a0nb.providers.chunks import delta_of, field, plain
from a0nb.providers.faults import classify, is_provider_error
from a0nb.resources import litellm_import_defaults

__all__ = ["LiteLLMProvider", "warm_import_in_background"]


class _LazyImport:
    """A module imported on first use, or ahead of it on a daemon thread. The warm-up starts its import only
    once no turn has run for QUIET seconds, so a turn that does not need the module never shares the
    interpreter with that import; a turn that needs it imports it at once (or waits for the import under
    way). The lock keeps a warm-up and a first call from importing and configuring it twice."""

    QUIET = 0.25  # seconds without a turn; back-to-back cells (Run All) come closer together than this

    def __init__(self, name: str, configure: Callable[[Any], None] = lambda module: None,
                 foreground: Foreground = FOREGROUND) -> None:
        self.name, self.configure, self.foreground = name, configure, foreground
        self.lock = threading.Lock()
        self.module: Any = None
        self.thread: threading.Thread | None = None
        self.waiting = threading.Event()  # the warm-up waits for a quiet moment (tests and benchmarks read it)
        self.warmed = False  # the warm-up, not a call, imported the module

    def get(self) -> Any:
        if self.module is not None:
            return self.module
        with self.lock:
            if self.module is None:
                module = importlib.import_module(self.name)
                self.configure(module)
                self.module = module
                self.warmed = threading.current_thread() is self.thread
        return self.module

    def warm(self, first: Callable[[], Any] | None = None, then: Callable[[Any], Any] | None = None) -> bool:
        """Import on a daemon thread; `first` runs on that thread at once (work a turn needs sooner), `then`
        after the import, with the module (what the first call would otherwise load). False when the module
        was already imported or a warm-up was started before (nothing started, `first` and `then` not run)."""
        with self.lock:
            if self.module is not None or self.thread is not None:
                return False
            self.thread = threading.Thread(target=self._warm, args=(first, then), name=f"a0nb-{self.name}-import",
                                           daemon=True)
            self.thread.start()
            return True

    def _warm(self, first: Callable[[], Any] | None, then: Callable[[Any], Any] | None) -> None:
        if first is not None:
            first()
        self.waiting.set()
        self.foreground.wait_quiet(self.QUIET)
        self.waiting.clear()
        if self.module is not None:
            return  # a call needed it first: it imported it and did the work `then` would do
        try:
            module = self.get()
        except Exception:  # noqa: BLE001 - a broken install surfaces on the first real call, with its message
            return
        if then is not None:
            self.foreground.wait_quiet(self.QUIET)
            try:
                then(module)
            except Exception:  # noqa: BLE001 - only a warm-up: the first call does the same work and reports
                pass


def _configure(litellm: Any) -> None:
    litellm.suppress_debug_info = True  # otherwise every error prints a help banner into the cell
    if hasattr(litellm, "disable_hf_tokenizer_download"):
        litellm.disable_hf_tokenizer_download = True


litellm_import_defaults()  # must precede the import: otherwise litellm fetches its price map from GitHub
# Process-wide by nature, like sys.modules which it mirrors: every agent in the process shares one litellm.
_LOADER = _LazyImport("litellm", _configure)


def _litellm() -> Any:
    return _LOADER.get()


class _Tokenizers:
    """The models whose tokenizer litellm has loaded or is loading in this process. litellm prices the prompt
    when a streamed call's reply starts (the stream wrapper's cost, even when the provider reports usage), and
    the first time for a model that loads its tiktoken encodings: ~0.5 s of CPU for openai/gpt-4o-mini, on top
    of the provider's own wait. A few tokens counted once per model load them ahead: in the warm-up after
    `%a0 model`, or, when a call comes first, on a thread that waits until the process is idle (the request is
    out, the provider has not answered, nothing else runs) and loads them then. Started at once, the load would
    hold up the request itself (both need the interpreter: litellm builds it partly on a worker thread, so an
    idle event loop alone does not say it is out); once the call has its reply, litellm has loaded them itself
    and the thread ends without loading."""

    POLL = 0.005  # seconds between looks at the process's CPU time
    IDLE_SHARE = 0.2  # a look is idle when the process used less than this share of it
    IDLE_LOOKS = 2  # idle looks in a row before the load starts

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.models: set[str] = set()

    def claim(self, model: str) -> bool:
        """True once for `model`: the caller loads its tokenizer."""
        with self.lock:
            if model in self.models:
                return False
            self.models.add(model)
            return True

    @staticmethod
    def load(litellm: Any, model: str) -> None:
        try:
            litellm.token_counter(model=model, messages=[{"role": "user", "content": "warm"}])
        except Exception:  # noqa: BLE001 - only ahead of time: the call prices (or fails) as it would have
            pass

    def load_while_waiting(self, litellm: Any, model: str) -> "_Wait | None":
        """Unless `model`'s tokenizer is loaded or loading: a daemon thread that loads it as soon as the process
        is idle (the call's request is out), until the call tells the returned `_Wait` it is over."""
        if model in self.models or not self.claim(model):
            return None
        wait = _Wait(self, model)
        threading.Thread(target=self._when_idle, args=(litellm, wait),
                         name="a0nb-litellm-tokenizer", daemon=True).start()
        return wait

    def _when_idle(self, litellm: Any, wait: "_Wait") -> None:
        """Load the tokenizer once the whole process has been idle for IDLE_LOOKS looks in a row (its CPU time
        grew by under IDLE_SHARE of each POLL): the request is out and nothing else wants the interpreter."""
        idle, last = 0, time.process_time()
        while not wait.over.wait(self.POLL):
            now = time.process_time()
            idle, last = (idle + 1 if now - last < self.POLL * self.IDLE_SHARE else 0), now
            if idle >= self.IDLE_LOOKS:
                with self.lock:
                    if wait.over.is_set():
                        return
                    wait.loading = True
                self.load(litellm, wait.model)
                return


class _Wait:
    """One call's wait for its reply, as the tokenizer's loader sees it."""

    def __init__(self, tokenizers: _Tokenizers, model: str) -> None:
        self.tokenizers, self.model = tokenizers, model
        self.over = threading.Event()
        self.loading = False

    def end(self, answered: bool) -> None:
        """The call has its reply (litellm priced it: the tokenizer is loaded) or failed before one; a failed
        call whose loader had not started leaves the model to the next call."""
        with self.tokenizers.lock:
            self.over.set()
            if not answered and not self.loading:
                self.tokenizers.models.discard(self.model)


_TOKENIZERS = _Tokenizers()


def warm_import_in_background(first: Callable[[], Any] | None = None, model: str | None = None) -> bool:
    """Start importing litellm on a daemon thread, so the first real call does not pay the import; `first`
    runs on that thread before it (the token encoder: both would import some of the same modules). With
    `model`, litellm then loads that model's tokenizer (`_Tokenizers`), unless a call got there first."""
    def count(litellm: Any) -> None:
        if model and _TOKENIZERS.claim(model):
            _TOKENIZERS.load(litellm, model)
    return _LOADER.warm(first, count if model else None)


def embed(model: str, texts: list[str], api_base: str | None = None) -> list[list[float]]:
    """Embedding vectors from a litellm embedding model (memory with a hosted `embedding_model`)."""
    kwargs: dict[str, Any] = {"api_base": api_base} if api_base else {}
    response = _litellm().embedding(model=model, input=texts, **kwargs)
    return [list(item["embedding"]) for item in response["data"]]


def _key_from(env: str, model: str) -> str:
    value = os.environ.get(env)
    if not value:
        raise ModelError(f"{model}: the environment variable {env} (named by api_key_env) is not set; set it in "
                         "the shell that starts Jupyter or in a .env file next to the notebook")
    return value


class LiteLLMProvider:
    """Any litellm model id (`openai/gpt-4o-mini`, `anthropic/...`, `ollama/...`, an `api_base`)."""

    name = "litellm"
    # litellm maps each provider's reasoning onto `reasoning_content`, and passes `tools=` through
    TAGS = frozenset({"reasoning", "tools", "usage"})

    def __init__(self, spec: str) -> None:
        self.spec = spec.strip()

    def tags(self, config: ModelConfig) -> frozenset[str]:
        return self.TAGS

    def init(self, config: ModelConfig) -> dict[str, Any]:
        partial = new_partial()
        partial["raw"] = []
        if "api_key" in config.params:
            raise ConfigError(f"{self.spec}: API keys are not taken from parameters (they would end up in call "
                              "records); set the provider's environment variable, or name one with api_key_env")
        # `_`-prefixed params are a0nb's own (secrets for cassettes, ...), never sent to the provider
        params = {k: v for k, v in config.params.items() if not k.startswith("_")}
        return {"config": config, "partial": partial, "model": self.spec, "params": params,
                "api_base": config.api_base, "api_key_env": config.api_key_env}

    def initialize_request(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        # the key is read from the environment in `stream`, so this dict is safe to record and show
        request: dict[str, Any] = {"model": self.spec, "messages": messages, **state["params"]}
        if state["api_base"]:
            request["api_base"] = state["api_base"]
        state["request"] = request
        return messages, state

    async def stream(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> AsyncIterator[Any]:
        litellm = _LOADER.module or await asyncio.to_thread(_LOADER.get)  # a 5 s import off the event loop
        kwargs = {**state["request"], "messages": messages, "stream": True, "stream_options": {"include_usage": True}}
        # one retry policy, a0nb's (visible in the call record): the SDK's own would multiply it
        kwargs.setdefault("max_retries", 0)
        env = state["api_key_env"]
        if env:
            kwargs["api_key"] = _key_from(env, self.spec)
        wait = _TOKENIZERS.load_while_waiting(litellm, kwargs["model"])  # (a model's first call: _Tokenizers)
        try:
            response = await litellm.acompletion(**kwargs)
        except BaseException as exc:
            if wait is not None:
                wait.end(answered=False)
            if not isinstance(exc, Exception) or not is_provider_error(exc):
                raise
            raise classify(exc, self.spec, env) from exc
        if wait is not None:
            wait.end(answered=True)
        chunks = response.__aiter__()
        first = True
        try:
            while True:
                try:
                    chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    return
                except Exception as exc:
                    # after the first chunk the driver turns a raw error into StreamBroken (keeps the partial)
                    if not first or not is_provider_error(exc):
                        raise
                    raise classify(exc, self.spec, env) from exc
                first = False
                yield chunk
        finally:
            # an early stop or a cancelled turn must release the HTTP connection now, not at GC time
            aclose = getattr(response, "aclose", None)
            if aclose is not None:
                await aclose()

    def process_chunk(self, chunk: Any, state: dict[str, Any]) -> tuple[str, str]:
        partial = state["partial"]
        partial["chunks"] += 1
        partial["raw"].append(chunk)
        usage = field(chunk, "usage")
        if usage:
            partial["usage"] = plain(usage)
        delta = delta_of(chunk)
        if delta is None:
            return "", ""
        text = field(delta, "content") or ""
        reasoning = field(delta, "reasoning_content") or ""
        if text:
            partial["content"].append(text)
        if reasoning:
            partial["reasoning"].append(reasoning)
        return reasoning, text

    def finalize(self, state: dict[str, Any]) -> ModelReply:
        partial = state["partial"]
        raw = partial["raw"]
        model = str((field(raw[0], "model") if raw else None) or self.spec)
        usage, cost = partial["usage"], None
        if usage:
            cost = _cost_from_usage(usage, (self.spec, model))
        else:  # the provider sent no usage chunk: let litellm rebuild the response and count
            response = _rebuild(raw, state["request"]["messages"])
            usage = plain(response.usage) if getattr(response, "usage", None) else {}
            cost = _cost(response)
        return ModelReply(content="".join(partial["content"]), reasoning="".join(partial["reasoning"]),
                          usage=usage, cost=cost,
                          model=model, chunks=partial["chunks"])


def _rebuild(raw: list[Any], messages: list[dict[str, Any]]) -> Any:
    """litellm's own full response from the chunks (for pricing); None when litellm is not loaded or fails."""
    litellm = _LOADER.module  # never import just to price: the reply is complete without it
    if litellm is None or not raw:
        return None
    try:
        chunks = [litellm.ModelResponseStream(**c) if isinstance(c, dict) else c for c in raw]
        return litellm.stream_chunk_builder(chunks, messages=messages)
    except Exception:  # noqa: BLE001 - pricing is best effort; the reply itself is already complete
        return None


def _cost(response: Any) -> float | None:
    litellm = _LOADER.module
    if litellm is None or response is None:
        return None
    try:
        return float(litellm.completion_cost(completion_response=response))
    except Exception:  # noqa: BLE001 - unknown models have no price; that is not an error
        return None


def _cost_from_usage(usage: dict[str, Any], models: tuple[str, ...]) -> float | None:
    """Price from the usage chunk. litellm usually put its own figure in it; else its price table. This
    skips `stream_chunk_builder`, which costs ~3 ms per call for the same number."""
    if isinstance(usage.get("cost"), (int, float)):
        return float(usage["cost"])
    litellm = _LOADER.module
    if litellm is None:
        return None
    for model in dict.fromkeys(models):
        try:
            prompt, completion = litellm.cost_per_token(
                model=model, prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0), usage_object=litellm.Usage(**usage))
            return float(prompt + completion)
        except Exception:  # noqa: BLE001 - not in the price table under this name; try the next
            continue
    return None
