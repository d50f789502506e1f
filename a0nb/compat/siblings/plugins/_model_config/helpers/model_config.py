"""The `_model_config` plugin's view of the chat model, answered from a0nb's settings (provider/name split
from the model spec); per-chat overrides of the model are a0nb's `%a0 model`, not a chat-data preset."""
from __future__ import annotations

from typing import Any


def _split(spec: str) -> tuple[str, str]:
    provider, sep, name = spec.partition("/")
    if sep:
        return provider, name
    provider, sep, name = spec.partition(":")
    return (provider, name) if sep else ("", spec)


def get_chat_model_config(agent: Any = None) -> dict[str, Any]:
    engine = getattr(agent, "_engine", agent)
    spec = engine.model_spec("chat") if engine is not None else ""
    provider, name = _split(spec)
    return {"provider": provider, "name": name, "ctx_length": getattr(engine.settings, "ctx_length", 0) if engine else 0}


def get_utility_model_config(agent: Any = None) -> dict[str, Any]:
    engine = getattr(agent, "_engine", agent)
    provider, name = _split(engine.model_spec("utility") if engine is not None else "")
    return {"provider": provider, "name": name}


def is_chat_override_allowed(agent: Any = None) -> bool:
    return False


def get_effective_preset_name(agent: Any = None) -> str:
    """The chosen `_model_config` preset (a0nb's setting `preset`: config.json `model_preset`, `%a0 model preset`)."""
    engine = getattr(agent, "_engine", agent)
    return str(getattr(engine.settings, "preset", "") or "") if engine is not None else ""
