"""Crystal Lattice features are provider-agnostic: with any a0nb provider (litellm, scripted, cassettes), the
FeaturePlugins run in the seed's order around it — `init(config, state)` after the provider's init,
`to_native_messages` then `initialize_request` after the provider's request setup, never per chunk, and on
the cold path `finalize(final_messages, native_messages, state)` then `from_native_messages` once the reply
is final. (A Crystal Lattice ProviderPlugin runs its features itself, inside its LatticeRun.)"""
from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Sequence

from a0nb.files.contracts import ContractError, call, expect_tuple, where_method
from a0nb.providers.base import ModelConfig, ModelReply
from a0nb.providers.lattice import Loaded, config_defaults

FeatureSource = Callable[[], Sequence[Loaded]]
Msgs = list[dict[str, Any]]


class FeaturedProvider:
    """`inner` with `features()` (asked once per request, so edited feature files apply to the next call).
    Feature state lives in the request's state dict (shared with the provider, as the seed says)."""

    def __init__(self, inner: Any, features: FeatureSource) -> None:
        self.inner = inner
        self.features = features
        self.name = inner.name

    def __getattr__(self, attr: str) -> Any:  # tags, has_reasoning_channel, ... of the wrapped provider
        return getattr(self.inner, attr)

    def feature_config(self, config: ModelConfig, active: Sequence[Loaded]) -> dict[str, Any]:
        out = config_defaults([f.instance for f in active])
        out.update({k: v for k, v in config.params.items() if not str(k).startswith("_")})
        provider, _, model = config.spec.partition("/") if "/" in config.spec else ("", "", config.spec)
        out.update(provider=provider or self.name, model=model or config.spec, tools=list(config.tools or []))
        return out

    def init(self, config: ModelConfig) -> dict[str, Any]:
        state = self.inner.init(config)
        active = list(self.features())
        cfg = self.feature_config(config, active)
        for f in active:
            new = call(f.instance, "init", "init(config, state) -> state", cfg, state, path=f.path)
            if not isinstance(new, dict):
                raise ContractError(f"{where_method(f.instance, 'init', f.path)} returned {type(new).__name__}; the "
                                    "contract is init(config, state) -> state: return the state dict")
            state = new
        state["lattice_features"] = active
        return state

    def initialize_request(self, messages: Msgs, state: dict[str, Any]) -> tuple[Msgs, dict[str, Any]]:
        native, state = self.inner.initialize_request(messages, state)
        active: list[Loaded] = state["lattice_features"]
        for f in active:
            native = call(f.instance, "to_native_messages", "to_native_messages(messages, native_messages) -> list",
                          messages, native, path=f.path)
        for f in active:
            out = call(f.instance, "initialize_request",
                       "initialize_request(native_messages, state) -> (native_messages, state)", native, state,
                       path=f.path)
            native, state = expect_tuple(out, "(native_messages, state)", "initialize_request", f.instance, f.path)
        state["lattice_natives"] = list(native)
        return native, state

    def stream(self, messages: Msgs, state: dict[str, Any]) -> AsyncIterator[Any]:
        return self.inner.stream(messages, state)  # type: ignore[no-any-return]

    def process_chunk(self, chunk: Any, state: dict[str, Any]) -> tuple[str, str]:
        return self.inner.process_chunk(chunk, state)  # type: ignore[no-any-return]

    def finalize(self, state: dict[str, Any]) -> ModelReply:
        return self.inner.finalize(state)  # type: ignore[no-any-return]

    def completed(self, reply: ModelReply, state: dict[str, Any]) -> None:
        """The reply is final (early stop applied; cassettes keep the provider's own reply): each feature's
        `finalize`, then `from_native_messages`, may change its content and metadata."""
        done = getattr(self.inner, "completed", None)
        if done is not None:
            done(reply, state)
        active: list[Loaded] = state.get("lattice_features") or []
        final = {"role": "assistant", "content": reply.content, "metadata": dict(reply.metadata)}
        if reply.reasoning:
            final["reasoning"] = reply.reasoning
        finals: Msgs = [final]
        natives: Msgs = [*state.get("lattice_natives", []), final]
        for f in active:
            out = call(f.instance, "finalize", "finalize(final_messages, native_messages, state) -> (finals, natives, state)",
                       finals, natives, state, path=f.path)
            finals, natives, state = expect_tuple(out, "(finals, natives, state)", "finalize", f.instance, f.path)
        core = finals
        for f in active:
            core = call(f.instance, "from_native_messages", "from_native_messages(native_messages, messages) -> list",
                        finals, core, path=f.path)
        last = next((m for m in reversed(core) if isinstance(m, dict) and m.get("role", "assistant") == "assistant"), None)
        if last is not None:
            reply.content = str(last.get("content") or "")
            reply.metadata = dict(last.get("metadata") or {})


def with_features(provider: Any, features: FeatureSource) -> Any:
    """`provider` with the features around it, unless it has none now or runs them itself (a LatticeProvider)."""
    from a0nb.providers.lattice_provider import LatticeProvider
    if isinstance(provider, (LatticeProvider, FeaturedProvider)) or not features():
        return provider
    return FeaturedProvider(provider, features)


__all__ = ["FeaturedProvider", "with_features"]
