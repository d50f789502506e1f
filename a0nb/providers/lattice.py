"""One request through a Crystal Lattice provider, its extensions and the features, in the seed's default
order: init chain, core→native transforms, request setup, call or stream (hot path per chunk), cold-path
finalize, native→core transforms. Every plugin result is checked against its contract's tuple."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from a0nb.files.contracts import ContractError, call, expect_tuple, overrides, where, where_method
from a0nb.providers.plugin_api import ProviderPlugin

Msgs = list[dict[str, Any]]
STEP = "(partials, finals, natives, state)"
P_CHUNK = "process_chunk(native_chunk, native_messages, state) -> (partials, finals, natives, state)"
E_CHUNK = "process_chunk(native_chunk, partial_messages, final_messages, native_messages, state) -> (partials, finals, natives, state)"


@dataclass(frozen=True)
class Loaded:
    """A plugin instance and where it came from (a file, or `registered in the notebook` when `path` is None)."""

    instance: Any
    path: Path | None = None
    root_label: str = "registered in the notebook"

    @property
    def name(self) -> str:
        cls = type(self.instance)
        stem = self.path.stem if self.path else "registered"
        return f"{stem}.{cls.__name__}"

    def where(self) -> str:
        return where(self.instance, self.path)


def enabled(loaded: Loaded, config: dict[str, Any], tags: set[str]) -> bool:
    """The seed's gating: `is_enabled` (None = undecided), then required/forbidden tags; opt-in plugins
    (`default_enabled = False`) run only when `config["enabled_plugins"]` names them."""
    obj = loaded.instance
    name = getattr(obj, "name", "") or type(obj).__name__
    if not getattr(obj, "default_enabled", True) and name not in (config.get("enabled_plugins") or ()):
        return False
    decide = getattr(obj, "is_enabled", None)
    decided = call(obj, "is_enabled", "is_enabled(config, tags, models, context) -> bool | None",
                   config, sorted(tags), [], None, path=loaded.path) if decide else None
    if decided is not None:
        return bool(decided)
    req = getattr(obj, "required_tags", None)
    forb = getattr(obj, "forbidden_tags", None)
    required = set(req() if callable(req) else req or ())
    forbidden = set(forb() if callable(forb) else forb or ())
    return required <= tags and not (forbidden & tags)


class LatticeRun:
    """The per-request state dict is created by the init chain and shared by the provider, its extensions
    and the features (tools keep their own). `natives` is the provider-native history of this request."""

    def __init__(self, provider: Loaded, extensions: Iterable[Loaded], features: Iterable[Loaded],
                 config: dict[str, Any]) -> None:
        self.provider = provider
        self.config = config
        tags = self.tags()
        self.extensions = [e for e in extensions if enabled(e, config, tags)]
        self.features = [f for f in features if enabled(f, config, tags)]
        self.natives: Msgs = []
        self.finals: Msgs = []
        self.chunks = 0
        self.state = self._init()

    def tags(self) -> set[str]:
        get_tags = getattr(self.provider.instance, "get_tags", None)
        if get_tags is None:
            return set()
        return set(call(self.provider.instance, "get_tags", "get_tags(config, models) -> list[str]", self.config, [],
                        path=self.provider.path) or ())

    @property
    def streams(self) -> bool:
        return overrides(type(self.provider.instance), ProviderPlugin, "stream_api") or (
            not hasattr(self.provider.instance, "call_api") and hasattr(self.provider.instance, "stream_api"))

    def _init(self) -> dict[str, Any]:
        p = self.provider
        state = call(p.instance, "init", "init(config) -> state", self.config, path=p.path)
        self._expect_state(state, p, "init", "init(config) -> state")
        for loaded in [*self.extensions, *self.features]:
            state = call(loaded.instance, "init", "init(config, state) -> state", self.config, state, path=loaded.path)
            self._expect_state(state, loaded, "init", "init(config, state) -> state")
        return dict(state)

    @staticmethod
    def _expect_state(state: Any, loaded: Loaded, method: str, contract: str) -> None:
        if not isinstance(state, dict):
            raise ContractError(f"{where_method(loaded.instance, method, loaded.path)} returned {type(state).__name__}; the contract is "
                                f"{contract}: return the state dict")

    # -- stateless transforms and request setup ------------------------------------------------------
    def to_native(self, messages: Msgs) -> Msgs:
        p = self.provider
        native = call(p.instance, "to_native_messages", "to_native_messages(messages, state) -> list",
                      messages, self.state, path=p.path)
        for loaded in [*self.extensions, *self.features]:
            native = call(loaded.instance, "to_native_messages", "to_native_messages(messages, native_messages) -> list",
                          messages, native, path=loaded.path)
        self._expect_list(native, "to_native_messages")
        return list(native)

    def from_native(self, native: Msgs) -> Msgs:
        p = self.provider
        core = call(p.instance, "from_native_messages", "from_native_messages(native_messages, state) -> list",
                    native, self.state, path=p.path)
        for loaded in [*self.extensions, *self.features]:
            core = call(loaded.instance, "from_native_messages",
                        "from_native_messages(native_messages, messages) -> list", native, core, path=loaded.path)
        self._expect_list(core, "from_native_messages")
        return list(core)

    def _expect_list(self, value: Any, method: str) -> None:
        if not isinstance(value, list):
            raise ContractError(f"{method} of {self.provider.where()} or one of its extensions/features returned "
                                f"{type(value).__name__}; the contract returns a list of messages")

    def initialize_request(self, native: Msgs) -> Msgs:
        for loaded in [self.provider, *self.extensions, *self.features]:
            out = call(loaded.instance, "initialize_request",
                       "initialize_request(native_messages, state) -> (native_messages, state)",
                       native, self.state, path=loaded.path)
            native, self.state = expect_tuple(out, "(native_messages, state)", "initialize_request", loaded.instance,
                                              loaded.path)
        self.natives = list(native)
        return self.natives

    # -- hot path ------------------------------------------------------------------------------------
    def stream(self) -> Any:
        p = self.provider
        return call(p.instance, "stream_api", "stream_api(native_messages, state) -> Iterator[chunk]",
                    self.natives, self.state, path=p.path)

    def call_api(self) -> Msgs:
        """A non-streaming provider: `call_api`, then each extension's `process_chunk` with `native_chunk=None`."""
        p = self.provider
        out = call(p.instance, "call_api", "call_api(native_messages, state) -> " + STEP, self.natives, self.state,
                   path=p.path)
        partials, finals, self.natives, self.state = expect_tuple(out, STEP, "call_api", p.instance, p.path)
        return self._extensions_chunk(None, partials, finals)

    def chunk(self, native_chunk: Any) -> Msgs:
        p = self.provider
        self.chunks += 1
        out = call(p.instance, "process_chunk", P_CHUNK, native_chunk, self.natives, self.state, path=p.path)
        partials, finals, self.natives, self.state = expect_tuple(out, STEP, "process_chunk", p.instance, p.path)
        return self._extensions_chunk(native_chunk, partials, finals)

    def _extensions_chunk(self, native_chunk: Any, partials: Msgs, finals: Msgs) -> Msgs:
        for loaded in self.extensions:
            out = call(loaded.instance, "process_chunk", E_CHUNK, native_chunk, partials, finals, self.natives,
                       self.state, path=loaded.path)
            partials, finals, self.natives, self.state = expect_tuple(out, STEP, "process_chunk", loaded.instance,
                                                                      loaded.path)
        self.finals += finals
        return partials

    # -- cold path -----------------------------------------------------------------------------------
    def finish(self) -> Msgs:
        """Provider `finalize`, then each extension's, then each feature's; returns the final core messages."""
        p = self.provider
        out = call(p.instance, "finalize", "finalize(native_messages, state) -> (finals, natives, state)",
                   self.natives, self.state, path=p.path)
        finals, self.natives, self.state = expect_tuple(out, "(finals, natives, state)", "finalize", p.instance, p.path)
        finals = [*self.finals, *finals]
        for loaded in [*self.extensions, *self.features]:
            out = call(loaded.instance, "finalize",
                       "finalize(final_messages, native_messages, state) -> (finals, natives, state)",
                       finals, self.natives, self.state, path=loaded.path)
            finals, self.natives, self.state = expect_tuple(out, "(finals, natives, state)", "finalize",
                                                            loaded.instance, loaded.path)
        self.finals = list(finals)
        return self.from_native(self.finals)


def config_defaults(instances: Iterable[Any]) -> dict[str, Any]:
    """`{key: default}` from each plugin's `get_config_schema()` (first plugin naming a key wins)."""
    out: dict[str, Any] = {}
    for obj in instances:
        schema = getattr(obj, "get_config_schema", None)
        for key, spec in (schema() if callable(schema) else {}).items():
            if isinstance(spec, dict) and "default" in spec:
                out.setdefault(key, spec["default"])
    return out


def text_of(messages: Msgs, key: str = "content") -> str:
    return "".join(m[key] for m in messages if isinstance(m, dict) and isinstance(m.get(key), str))


__all__ = ["Loaded", "LatticeRun", "enabled", "config_defaults", "text_of"]
