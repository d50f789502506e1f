"""History as the model sees it: output items turned into OpenAI-shaped chat messages (AI ->
assistant, everything else -> user, consecutive same roles merged), the hottest loop of a step."""
from __future__ import annotations

from typing import Any, Sequence

from a0nb.engine.history import OutputItem

__all__ = ["to_chat_messages"]


def _parts(content: str | list) -> list:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _merge(a: str | list, b: str | list) -> str | list:
    if isinstance(a, str) and isinstance(b, str):
        return f"{a}\n{b}"
    return _parts(a) + _parts(b)


def _is_empty(content: str | list) -> bool:
    # isspace() stops at the first other character; strip() would copy the whole text on every step
    return not content or (isinstance(content, str) and content.isspace())


def to_chat_messages(items: Sequence[OutputItem], system: str | None = None) -> list[dict[str, Any]]:
    """OpenAI-shaped messages: AI -> assistant, everything else -> user, consecutive same roles merged."""
    result: list[dict[str, Any]] = []
    if system is not None:  # providers reject empty content
        result.append({"role": "system", "content": "empty" if _is_empty(system) else system})
    last: dict[str, Any] | None = result[-1] if result else None
    for item in items:  # the hottest loop of a step at long histories: kept free of calls
        content = item.content
        if not content:
            continue
        if content.__class__ is str:
            if content.isspace():
                continue
        else:
            content = list(content)
        role = "assistant" if item.ai else "user"
        if last is not None and last["role"] == role:
            last["content"] = _merge(last["content"], content)  # non-empty parts: never empty
        else:
            last = {"role": role, "content": content}
            result.append(last)
    return result
