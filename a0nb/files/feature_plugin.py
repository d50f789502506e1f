"""Crystal Lattice's FeaturePlugin: provider-agnostic behaviour on the cold path (init, finalize), templates
and completions for the notebook; the defaults are the seed's adapter defaults (identity, empty)."""
from __future__ import annotations

from typing import Any, ClassVar, Dict, List, Tuple

Msgs = List[Dict[str, Any]]

FEATURE_REQUIRED = ("init", "finalize")
FEATURE_SIGNATURES = {
    "init": "init(self, config, state) -> state",
    "finalize": "finalize(self, final_messages, native_messages, state) -> (finals, natives, state)",
}


class FeaturePlugin:
    """Subclass and define `init(config, state) -> state` and
    `finalize(final_messages, native_messages, state) -> (finals, natives, state)`; the rest is optional.

    A feature sees the provider's per-request state (shared with the provider and its extensions) but is
    never called per chunk. `get_completions(config, text)` feeds Tab completion of `%a0 ask` / `%%a0`,
    `apply_completion(config, text, completion)` expands an accepted completion, `get_template(config)` adds
    text to the system prompt."""

    name: ClassVar[str] = ""
    version: ClassVar[str] = "0.0.0"
    default_enabled: ClassVar[bool] = True

    def get_config_schema(self) -> Dict[str, Any]:
        return {}

    def get_ui_elements(self, config: Dict[str, Any] | None = None, tags: List[str] | None = None,
                        models: List[Dict[str, Any]] | None = None) -> List[Dict[str, Any]]:
        return []

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

    def get_template(self, config: Dict[str, Any]) -> str:
        return ""

    def get_completions(self, config: Dict[str, Any], text: str) -> List[Dict[str, Any]]:
        return []

    def apply_completion(self, config: Dict[str, Any], text: str, completion: Dict[str, Any]) -> str:
        return ""


def is_feature_plugin(obj: Any) -> bool:
    return isinstance(obj, FeaturePlugin) or (isinstance(obj, type) and issubclass(obj, FeaturePlugin))


__all__ = ["FeaturePlugin", "FEATURE_REQUIRED", "FEATURE_SIGNATURES", "is_feature_plugin"]
