"""Agent Zero's `helpers.secrets`: the secrets manager of a context, over a0nb's secrets (the notebook's
`.a0proj/secrets.env` and `.env`); masking goes through a0nb's one masking function."""
from __future__ import annotations

from typing import Any

from a0nb.ext import StreamMasker, secret_alias

ALIAS_PATTERN = r"§§secret\(([A-Za-z_][A-Za-z0-9_]*)\)"


class _StreamingFilter:
    def __init__(self, masker: StreamMasker | None) -> None:
        self.masker = masker

    def process_chunk(self, chunk: str) -> str:
        return self.masker.feed(chunk) if self.masker is not None else chunk

    def finalize(self) -> str:
        return self.masker.flush() if self.masker is not None else ""


class SecretsManager:
    """Masking and placeholder replacement with one agent's secrets (none without an agent)."""

    def __init__(self, engine: Any = None) -> None:
        self.engine = engine

    def _secrets(self) -> Any:
        return self.engine.secrets if self.engine is not None else None

    def mask_values(self, text: str, **kwargs: Any) -> str:
        return self.engine.mask(text) if self.engine is not None else text

    def replace_placeholders(self, text: str) -> Any:
        secrets = self._secrets()
        return secrets.resolve(text) if secrets else text

    def get_keys(self) -> list[str]:
        secrets = self._secrets()
        return [e.key for e in secrets.keys()] if secrets else []

    def get_secrets_for_prompt(self) -> str:
        return "\n".join(f"{secret_alias(k)}" for k in self.get_keys())

    def create_streaming_filter(self) -> _StreamingFilter:
        secrets = self._secrets()
        return _StreamingFilter(StreamMasker(secrets) if secrets else None)


def get_secrets_manager(context: Any = None) -> SecretsManager:
    agent = getattr(context, "agent0", None) if context is not None else None
    if agent is None:
        from a0nb.compat.agent import current
        agent = current()
    return SecretsManager(getattr(agent, "_engine", None))


def get_default_secrets_manager() -> SecretsManager:
    return get_secrets_manager()
