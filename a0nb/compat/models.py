"""Agent Zero's `models`: `LiteLLMChatWrapper.unified_call`, the streamed call with upstream's callbacks
(a callback returning a string stops the stream; that string is the response). litellm is imported on the
first real call only; `acompletion` and `apply_rate_limiter` are module attributes, as upstream's are."""
from __future__ import annotations

from typing import Any, Awaitable, Callable

Callback = Callable[[str, str], Awaitable[Any]]


async def acompletion(*args: Any, **kwargs: Any) -> Any:
    import litellm
    return await litellm.acompletion(*args, **kwargs)


async def apply_rate_limiter(*args: Any, **kwargs: Any) -> None:
    return None  # a0nb retries rate-limited calls with backoff (settings retries/backoff)


def _delta(chunk: Any, key: str) -> str:
    choices = chunk.get("choices") if isinstance(chunk, dict) else getattr(chunk, "choices", None)
    if not choices:
        return ""
    first = choices[0]
    delta = first.get("delta") if isinstance(first, dict) else getattr(first, "delta", None)
    if delta is None:
        return ""
    value = delta.get(key) if isinstance(delta, dict) else getattr(delta, key, None)
    return value or ""


class LiteLLMChatWrapper:
    def __init__(self, model: str, provider: str, model_config: Any = None, **kwargs: Any) -> None:
        self.model_name = model
        self.provider = provider
        self.model_config = model_config
        self.kwargs = kwargs

    async def unified_call(self, messages: list[Any] | None = None, system_message: str | None = None,
                           user_message: str | None = None, response_callback: Callback | None = None,
                           reasoning_callback: Callback | None = None, tokens_callback: Any = None,
                           rate_limiter_callback: Any = None, **kwargs: Any) -> tuple[str, str]:
        msgs = list(messages or [])
        if system_message:
            msgs.insert(0, {"role": "system", "content": system_message})
        if user_message:
            msgs.append({"role": "user", "content": user_message})
        await apply_rate_limiter(self.model_config, msgs, rate_limiter_callback)
        stream = await acompletion(model=f"{self.provider}/{self.model_name}", messages=msgs, stream=True,
                                   **{**self.kwargs, **kwargs})
        response = reasoning = ""
        async for chunk in stream:
            if r := _delta(chunk, "reasoning_content"):
                reasoning += r
                if reasoning_callback is not None:
                    await reasoning_callback(r, reasoning)
            if c := _delta(chunk, "content"):
                response += c
                if response_callback is not None:
                    stop = await response_callback(c, response)
                    if isinstance(stop, str):
                        return stop, reasoning
        return response, reasoning
