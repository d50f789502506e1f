"""Reading OpenAI/litellm-shaped stream chunks, which arrive as plain dicts (fixtures, cassettes) or as
litellm's pydantic objects: one fast field accessor for the hot path, and a plain-dict copy."""
from __future__ import annotations

from typing import Any

__all__ = ["field", "plain", "delta_of"]


def field(obj: Any, key: str) -> Any:
    """One field of a chunk part, or None.

    The hot path reads pydantic storage directly (fields in `__dict__`, litellm's undeclared delta fields
    in `__pydantic_extra__`): plain attribute access on litellm's models costs ~4 us, ~40x more."""
    if isinstance(obj, dict):
        return obj.get(key)
    fields = getattr(obj, "__dict__", None)
    if fields is not None and key in fields:
        return fields[key]
    if hasattr(obj, "__pydantic_fields__"):
        extra = obj.__pydantic_extra__
        return extra.get(key) if extra else None
    return getattr(obj, key, None)


def delta_of(chunk: Any) -> Any:
    """The first choice's delta, or None (usage-only chunks, other providers' chunk shapes)."""
    if isinstance(chunk, (str, tuple)):
        return None
    choices = field(chunk, "choices")
    if not choices:
        return None
    return field(choices[0], "delta")


def plain(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    return dict(dump()) if dump is not None else dict(vars(value))
