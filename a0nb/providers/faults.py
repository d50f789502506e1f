"""Classify provider exceptions (litellm, openai SDK, httpx, plain sockets) into a0nb's model errors:
transient (retry before the first chunk), context window, auth (names the env var), or plain ModelError."""
from __future__ import annotations

import re
import sys

from a0nb.errors import ModelError
from a0nb.files.credentials import credential_values
from a0nb.files.secrets import Secrets
from a0nb.providers.base import ContextWindowExceeded, TransientModelError

__all__ = ["classify", "is_provider_error", "key_env_var", "redact"]

# Matched by class name along the MRO so this module never imports litellm or openai.
_CONTEXT = {"ContextWindowExceededError"}
_AUTH = {"AuthenticationError", "PermissionDeniedError", "CallerCredentialAuthenticationError"}
_TRANSIENT = {"RateLimitError", "Timeout", "APITimeoutError", "InternalServerError", "ServiceUnavailableError",
              "APIConnectionError", "BadGatewayError", "MidStreamFallbackError", "ConnectError", "ReadTimeout",
              "ConnectTimeout", "RemoteProtocolError", "ReadError"}
_PROVIDER_MODULES = ("litellm", "openai", "httpx", "httpcore", "anthropic", "aiohttp")
_CONTEXT_TEXT = re.compile(r"context[_ ]length|context window|maximum context|too many tokens|prompt is too long", re.I)
# litellm reports a missing OpenAI key as a 500 InternalServerError, so the text decides
_AUTH_TEXT = re.compile(r"missing credentials|api[_ -]?key|unauthori[sz]ed|invalid x-api-key|authenticat", re.I)
_KEYLIKE = re.compile(r"\b(sk|pk|rk|gsk|xai|hf)[-_][A-Za-z0-9_\-]{8,}")

# provider prefix -> the variable litellm reads; used when litellm itself cannot say
KEY_VARS = {
    "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY", "mistral": "MISTRAL_API_KEY", "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY", "together_ai": "TOGETHERAI_API_KEY", "xai": "XAI_API_KEY",
    "cohere": "COHERE_API_KEY", "azure": "AZURE_API_KEY", "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "perplexity": "PERPLEXITYAI_API_KEY", "huggingface": "HF_TOKEN", "cerebras": "CEREBRAS_API_KEY",
}


def is_provider_error(exc: BaseException) -> bool:
    """True for errors raised by the model client stack; anything else is a bug and should propagate."""
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return True
    return any(k.__module__.split(".")[0] in _PROVIDER_MODULES for k in type(exc).__mro__)


def classify(exc: BaseException, model: str = "", api_key_env: str | None = None) -> ModelError:
    """The a0nb error for a provider exception; its message names the model and never a key value."""
    names = {k.__name__ for k in type(exc).__mro__}
    status = getattr(exc, "status_code", None)
    text = redact(str(exc))
    label = f"{model}: " if model else ""
    kind = type(exc).__name__
    if names & _CONTEXT or _CONTEXT_TEXT.search(text):
        return ContextWindowExceeded(f"{label}the request does not fit the model's context window ({kind}): {text}")
    if names & _AUTH or status in (401, 403) or (_AUTH_TEXT.search(text) and not names & {"RateLimitError"}):
        var = key_env_var(model, api_key_env)
        return ModelError(f"{label}authentication failed ({kind}). Set the environment variable {var} "
                          "(in the shell that starts Jupyter, or in a .env file next to the notebook); "
                          f"keys are never taken from magic arguments. Provider said: {text}")
    if (names & _TRANSIENT or isinstance(exc, (TimeoutError, ConnectionError))
            or status in (408, 409, 429) or (isinstance(status, int) and status >= 500)):
        return TransientModelError(f"{label}temporary provider failure ({kind}): {text}")
    if "NotFoundError" in names or status == 404:
        return ModelError(f"{label}the provider does not know this model or endpoint ({kind}); "
                          f"check the model id and api_base: {text}")
    return ModelError(f"{label}the model call failed ({kind}): {text}")


def key_env_var(model: str, api_key_env: str | None = None) -> str:
    """The environment variable that should hold the key for `model` (a name, never a value)."""
    if api_key_env:
        return api_key_env
    litellm = sys.modules.get("litellm")
    if litellm is not None and model:
        try:
            missing = litellm.validate_environment(model).get("missing_keys") or []
            keys = [m for m in missing if m.endswith(("_KEY", "_TOKEN"))]
            if keys:
                return " or ".join(keys)
            provider = litellm.get_llm_provider(model)[1]
            if provider in KEY_VARS:
                return KEY_VARS[provider]
        except Exception:  # noqa: BLE001 - a hint only; fall back to the table
            pass
    prefix = model.split("/", 1)[0] if "/" in model else ("openai" if model.startswith(("gpt", "o1", "o3", "o4")) else "")
    return KEY_VARS.get(prefix, "the provider's API key variable (for example OPENAI_API_KEY)")


def redact(text: str, limit: int = 600) -> str:
    """Provider messages sometimes echo part of a key: drop env key values and key-shaped tokens."""
    text = Secrets(credentials=credential_values()).mask_text(text)
    text = _KEYLIKE.sub("<redacted>", text)
    return text if len(text) <= limit else text[:limit] + " …"
