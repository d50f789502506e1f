"""Choose a provider from a model spec: `scripted:`, `replay:`, `record:`, `local:`, a prefix
declared by a provider class in a `providers/` folder, else litellm."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from a0nb.errors import ConfigError
from a0nb.providers.base import Provider


def make_provider(spec: str | Sequence[Any], workdir: Path, custom: dict[str, Any] | None = None) -> Provider:
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
    _refuse_unknown_prefix(spec, prefix, custom)
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
    if ":" in spec and _PREFIX.fullmatch(prefix) and prefix != "ft":
        return None  # `name:model` is a provider prefix (make_provider refuses unknown ones), not a litellm id
    return spec


_BUILT_IN = ("scripted", "replay", "record", "local")
_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _refuse_unknown_prefix(spec: str, prefix: str, custom: dict[str, Any] | None) -> None:
    """`name:model` with a `name` no provider declares is a mistake, not a litellm id (litellm's are
    `vendor/model`): say which prefixes exist, and which providers/*.py files did not load."""
    if ":" not in spec or not _PREFIX.fullmatch(prefix) or prefix == "ft":  # ft:gpt-...: OpenAI fine-tunes
        return
    known = ", ".join(f"{p}:" for p in [*_BUILT_IN, *sorted(custom or {})])
    broken = list(getattr(custom, "broken", ()) or ())
    if broken:
        raise ConfigError(f"model {spec!r}: no provider named {prefix!r} loaded, and these providers/ files failed: "
                          + "; ".join(broken) + f". Fix them (known prefixes now: {known})")
    raise ConfigError(f"model {spec!r}: unknown provider prefix {prefix!r}. Known prefixes: {known}; litellm models "
                      "are written vendor/model (openai/gpt-4o-mini). A provider of your own is a ProviderPlugin class "
                      f"with name = {prefix!r} in providers/<file>.py")


def no_model_message() -> str:
    return ("no model is configured. Set one in any of three ways: `%a0 model openai/gpt-4o-mini` (or "
            "`Agent(model=...)`), `%config A0.model = '...'`, or the environment variable A0NB_MODEL. "
            "For an offline run use `scripted:replies.yaml` or `replay:cassette.yaml`.")
