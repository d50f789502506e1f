"""Choose a provider from a model spec: `scripted:`, `replay:`, `record:`, `local:`, a prefix
declared by a provider class in a `providers/` folder, else litellm."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Sequence

from a0nb.errors import ConfigError
from a0nb.providers.base import Provider


def make_provider(spec: str | Sequence[Any], workdir: Path, custom: dict[str, type] | None = None) -> Provider:
    if not isinstance(spec, str):
        from a0nb.providers.scripted import ScriptedProvider
        return ScriptedProvider(spec)
    spec = spec.strip()
    if not spec:
        raise ConfigError(no_model_message())
    prefix, _, rest = spec.partition(":")
    if custom and prefix in custom:
        return custom[prefix](rest, workdir)  # type: ignore[no-any-return]
    if prefix == "scripted":
        from a0nb.providers.scripted import ScriptedProvider
        return ScriptedProvider(rest, base=workdir)
    if prefix in ("replay", "record"):
        from a0nb.providers.cassette import cassette_provider
        return cassette_provider(spec, workdir, lambda inner: make_provider(inner, workdir, custom))
    if prefix == "local":
        from a0nb.providers.local import LocalProvider
        return LocalProvider(rest)
    from a0nb.providers.litellm_provider import LiteLLMProvider
    return LiteLLMProvider(spec)


def litellm_model_of(spec: str, custom: Iterable[str] = ()) -> str | None:
    """The litellm model id that `make_provider(spec)` would call (through `record:`), or None when the
    spec goes to another provider (scripted, replay, local, a `providers/` class)."""
    spec = spec.strip()
    prefix, _, rest = spec.partition(":")
    if prefix == "record":
        inner = rest.partition(":")[2].strip()
        return litellm_model_of(inner, custom) if inner else None
    if not spec or prefix in ("scripted", "replay", "local") or prefix in set(custom):
        return None
    return spec


def no_model_message() -> str:
    return ("no model is configured. Set one in any of three ways: `%a0 model openai/gpt-4o-mini` (or "
            "`Agent(model=...)`), `%config A0.model = '...'`, or the environment variable A0NB_MODEL. "
            "For an offline run use `scripted:replies.yaml` or `replay:cassette.yaml`.")
