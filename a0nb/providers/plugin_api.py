"""Crystal Lattice's provider contracts, with the seed's names and return tuples: `ProviderPlugin` (one LLM
API; hot path `process_chunk`, cold path `finalize`) and `ProviderExtensionPlugin` (beside a provider, sharing
its state). Missing optional methods get the seed's adapter defaults."""
from __future__ import annotations

from typing import Any, ClassVar, Dict, Iterator, List, Tuple

Msgs = List[Dict[str, Any]]
Step = Tuple[Msgs, Msgs, Msgs, Dict[str, Any]]  # (partials, finals, natives, state)

PROVIDER_REQUIRED = ("init", ("call_api", "stream_api"))
PROVIDER_SIGNATURES = {
    "init": "init(self, config) -> state",
    "call_api": "call_api(self, native_messages, state) -> (partials, finals, natives, state), or "
                "stream_api(self, native_messages, state) -> Iterator[native_chunk] with process_chunk",
    "process_chunk": "process_chunk(self, native_chunk, native_messages, state) -> (partials, finals, natives, state)",
}
EXTENSION_REQUIRED = ("init", "process_chunk")
EXTENSION_SIGNATURES = {
    "init": "init(self, config, state) -> state",
    "process_chunk": "process_chunk(self, native_chunk, partial_messages, final_messages, native_messages, state) "
                     "-> (partials, finals, natives, state)",
}


class _Common:
    name: ClassVar[str] = ""
    version: ClassVar[str] = "0.0.0"
    default_enabled: ClassVar[bool] = True

    def get_config_schema(self) -> Dict[str, Any]:
        return {}

    def get_ui_elements(self, config: Dict[str, Any] | None = None, tags: List[str] | None = None,
                        models: List[Dict[str, Any]] | None = None) -> List[Dict[str, Any]]:
        return []


class ProviderPlugin(_Common):
    """Subclass, set `name` (the model prefix: `name:model`), define `init(config) -> state` and either
    `call_api(native_messages, state) -> (partials, finals, natives, state)` or `stream_api(native_messages,
    state)` yielding native chunks with `process_chunk(native_chunk, native_messages, state) -> (partials,
    finals, natives, state)` and `finalize(native_messages, state) -> (finals, natives, state)`."""

    def get_tags(self, config: Dict[str, Any], models: List[Dict[str, Any]] | None = None) -> List[str]:
        return []

    def get_models(self, config: Dict[str, Any]) -> List[Dict[str, Any]]:
        return []

    def to_native_messages(self, messages: Msgs, state: Dict[str, Any]) -> Msgs:
        """Default: role and content of each core message."""
        return [{"role": m.get("role", "user"), "content": m.get("content", "")} for m in messages]

    def from_native_messages(self, native_messages: Msgs, state: Dict[str, Any]) -> Msgs:
        """Default: core messages with the native message's metadata (empty when it has none)."""
        out = []
        for m in native_messages:
            metadata = dict(m.get("metadata") or {})
            for key in ("reasoning", "tool_calls", "usage"):
                if m.get(key) and key not in metadata:
                    metadata[key] = m[key]
            out.append({"role": m.get("role", "assistant"), "content": m.get("content") or "", "metadata": metadata})
        return out

    def initialize_request(self, native_messages: Msgs, state: Dict[str, Any]) -> Tuple[Msgs, Dict[str, Any]]:
        return native_messages, state

    def process_chunk(self, native_chunk: Any, native_messages: Msgs, state: Dict[str, Any]) -> Step:
        """Default hot path: the seed's accumulator pattern over OpenAI-shaped chunks (`choices[0].delta`)."""
        choices = native_chunk.get("choices") if isinstance(native_chunk, dict) else None
        delta = (choices[0].get("delta") or choices[0].get("message")) if choices else None
        if not isinstance(delta, dict):
            return [], [], native_messages, state
        base = dict(state.get("partial") or {})
        base["role"] = delta.get("role", base.get("role", "assistant"))
        base["content"] = base.get("content", "") + (delta.get("content") or "")
        return [delta], [], native_messages, {**state, "partial": base}

    def finalize(self, native_messages: Msgs, state: Dict[str, Any]) -> Tuple[Msgs, Msgs, Dict[str, Any]]:
        """Default cold path: the accumulated `state["partial"]` (if any) is the final message."""
        partial = state.get("partial")
        if partial:
            return [partial], [*native_messages, partial], state
        return [], native_messages, state

    def stream_api(self, native_messages: Msgs, state: Dict[str, Any]) -> Iterator[Any]:
        raise NotImplementedError("this provider only has call_api")  # the runner calls call_api instead


class ProviderExtensionPlugin(_Common):
    """Subclass and define `init(config, state) -> state` and `process_chunk(native_chunk, partial_messages,
    final_messages, native_messages, state) -> (partials, finals, natives, state)` (`native_chunk` is None
    after a non-streaming `call_api`); `finalize(final_messages, native_messages, state) -> (finals, natives,
    state)` defaults to returning its inputs."""

    def is_enabled(self, config: Dict[str, Any], tags: Any = None, models: Any = None, context: Any = None) -> bool | None:
        return None

    def required_tags(self) -> set[str]:
        return set()

    def forbidden_tags(self) -> set[str]:
        return set()

    def to_native_messages(self, messages: Msgs, native_messages: Msgs) -> Msgs:
        return native_messages

    def from_native_messages(self, native_messages: Msgs, messages: Msgs) -> Msgs:
        return messages

    def initialize_request(self, native_messages: Msgs, state: Dict[str, Any]) -> Tuple[Msgs, Dict[str, Any]]:
        return native_messages, state

    def finalize(self, final_messages: Msgs, native_messages: Msgs, state: Dict[str, Any]) -> Tuple[Msgs, Msgs, Dict[str, Any]]:
        return final_messages, native_messages, state


__all__ = ["ProviderPlugin", "ProviderExtensionPlugin", "PROVIDER_REQUIRED", "PROVIDER_SIGNATURES",
           "EXTENSION_REQUIRED", "EXTENSION_SIGNATURES"]
