"""Provider extensions (crystal-lattice.md §3.4): capabilities bolted onto providers without touching
them — reasoning split out of `<think>` tags, native tool calls — found as classes in `providers/*.py`
of every root, and the per-request pipeline that runs a provider together with the ones that apply."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Iterable, Sequence

from a0nb.diagnostics import Diagnostics
from a0nb.errors import ModelError
from a0nb.files.hierarchy import Hierarchy
from a0nb.files.loader import ModuleLoader, module_name_for, subclasses_in
from a0nb.providers.base import ModelConfig, ModelReply, Provider, new_partial
from a0nb.resources import bundled_root

__all__ = ["ProviderExtension", "ProviderExtensionError", "LoadedExtension", "CallPipeline", "provider_tags",
           "discover_provider_extensions", "bundled_provider_extensions", "extensions_from_folders"]

Deltas = tuple[str, str]  # (reasoning delta, response delta)


class ProviderExtension:
    """Base class for provider extensions; override only what you need (the defaults do nothing).

    Gating, checked once per request: `providers` (provider names, empty = any), `required_tags` /
    `forbidden_tags` against the provider's tags (`reasoning`, `tools`, `usage`, ...), then
    `is_enabled(config, tags)` (None = the tags decide). `state` is the provider's dict for this request,
    shared by the provider and every extension; `state["partial"]` is the streaming accumulator.
    """

    providers: ClassVar[tuple[str, ...]] = ()
    required_tags: ClassVar[frozenset[str]] = frozenset()
    forbidden_tags: ClassVar[frozenset[str]] = frozenset()

    def is_enabled(self, config: ModelConfig, tags: frozenset[str]) -> bool | None:
        return None

    def initialize_request(self, native: list[dict[str, Any]], state: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Decorate the request before it is sent (`state["request"]`: tool schemas, reasoning knobs)."""
        return native, state

    def process_chunk(self, chunk: Any, deltas: Deltas, state: dict[str, Any]) -> Deltas:
        """Hot path, once per native chunk after the provider folded it: O(delta) work only. Return the
        (reasoning, response) deltas to show, possibly moved between the two."""
        return deltas

    def passes_through(self, state: dict[str, Any]) -> bool:
        """Asked after each `process_chunk` when overridden: True once every further chunk of this request
        would come back unchanged (a `<think>` split past its opening): the pipeline stops calling
        `process_chunk` for it (`end_stream` and `finalize` still run)."""
        return False

    def end_stream(self, state: dict[str, Any]) -> Deltas:
        """The stream ended normally: release any text held back."""
        return "", ""

    def finalize(self, reply: ModelReply, state: dict[str, Any]) -> ModelReply:
        """Cold path, once: map what was accumulated onto the final reply (tool calls, reasoning)."""
        return reply


class ProviderExtensionError(ModelError):
    """A provider extension raised; the message names its file and method."""


@dataclass(frozen=True)
class LoadedExtension:
    """One discovered extension: the instance, its file, its root, and the lower copies it overrode."""

    name: str
    extension: ProviderExtension
    path: Path | None
    root_label: str
    overrode: tuple[Path, ...] = ()

    def applies(self, provider: Provider, config: ModelConfig, tags: frozenset[str]) -> bool:
        ext = self.extension
        if ext.providers and provider.name not in ext.providers:
            return False
        decided = ext.is_enabled(config, tags)
        if decided is not None:
            return bool(decided)
        return ext.required_tags <= tags and not (ext.forbidden_tags & tags)

    def where(self) -> str:
        return str(self.path) if self.path else self.name


def provider_tags(provider: Provider, config: ModelConfig) -> frozenset[str]:
    """The provider's capability tags; providers without `tags()` say `has_reasoning_channel` instead."""
    tags = getattr(provider, "tags", None)
    if callable(tags):
        return frozenset(tags(config))
    return frozenset({"reasoning"}) if getattr(provider, "has_reasoning_channel", False) else frozenset()


# ---------------------------------------------------------------- discovery


def extensions_from_folders(folders: Iterable[tuple[str, Path, Path]], loader: ModuleLoader) -> list[LoadedExtension]:
    """`(root label, root path, providers folder)` in priority order -> extensions, one per file name (the
    highest root's copy wins), in file-name order. Files holding only provider classes contribute nothing."""
    copies: dict[str, list[tuple[str, Path, Path]]] = {}
    for label, root_path, folder in folders:
        for path in sorted(folder.glob("*.py")):
            if not path.name.startswith("__"):
                copies.setdefault(path.name, []).append((label, root_path, path))
    found: list[LoadedExtension] = []
    for file_name in sorted(copies):
        for i, (label, root_path, path) in enumerate(copies[file_name]):
            module = loader.load(path, module_name_for(root_path, path), "provider")
            if module is None:
                continue  # an import error is in diagnostics; a lower copy may still load
            classes = subclasses_in(module, ProviderExtension)
            if classes:
                lower = tuple(p for _, _, p in copies[file_name][i + 1:])
                found += [LoadedExtension(f"{path.stem}.{cls.__name__}", cls(), path, label, lower) for cls in classes]
            break  # the winning copy decides, even when it holds only providers
    return found


def discover_provider_extensions(hierarchy: Hierarchy, loader: ModuleLoader) -> list[LoadedExtension]:
    def build() -> list[LoadedExtension]:
        folders = [(root.label, root.path, folder) for root, folder in hierarchy.dirs("providers")]
        return extensions_from_folders(folders, loader)
    return hierarchy.memo(("provider-extensions",), build)


class _BundledCache:
    """The bundled `providers/` folder never changes in a running process: load it once, on first use."""

    def __init__(self) -> None:
        self.value: list[LoadedExtension] | None = None

    def get(self) -> list[LoadedExtension]:
        if self.value is None:
            root = bundled_root()
            folder = root / "providers"
            folders = [("bundled", root, folder)] if folder.is_dir() else []
            self.value = extensions_from_folders(folders, ModuleLoader(Diagnostics()))
        return self.value


# Process-wide cache: the bundled folder belongs to the installed package, the same for every agent.
_BUNDLED = _BundledCache()


def bundled_provider_extensions() -> list[LoadedExtension]:
    """What `complete()` uses when the caller names no extensions (a provider used outside an agent)."""
    return _BUNDLED.get()


# ---------------------------------------------------------------- the per-request pipeline


def _overrides(ext: ProviderExtension, method: str) -> bool:
    """Whether `ext` does anything in `method` (its class or the instance replaced the base's no-op)."""
    return getattr(getattr(ext, method), "__func__", None) is not getattr(ProviderExtension, method)


class _Plan:
    """The extensions that apply to one provider name and tag set, and which of their methods do anything
    (the others are left out of the per-request and per-chunk loops)."""

    __slots__ = ("active", "names", "chunkers", "requesters", "enders", "finishers")

    def __init__(self, active: list[LoadedExtension]) -> None:
        self.active = active
        self.names = [e.name for e in active]
        self.chunkers = [(e, e.extension.process_chunk,
                          e.extension.passes_through if _overrides(e.extension, "passes_through") else None)
                         for e in active if _overrides(e.extension, "process_chunk")]
        self.requesters = [e for e in active if _overrides(e.extension, "initialize_request")]
        self.enders = [e for e in active if _overrides(e.extension, "end_stream")]
        self.finishers = [e for e in active if _overrides(e.extension, "finalize")]


# id(extension list) -> (the list, its plans by (provider name, tags)), or None for a list in which an extension
# decides per request (`is_enabled`): the gates are asked again each time. A list lives as long as the hierarchy
# version it was discovered for (discover_provider_extensions' memo), so a changed providers/ file is a new list.
_PLANS: dict[int, tuple[Sequence[LoadedExtension], dict[tuple[str, frozenset[str]], _Plan] | None]] = {}


class CallPipeline:
    """One request: the provider plus the extensions that apply to it, sharing one `state` dict.
    `request` → `chunk`×N → `end` → `reply`; every extension failure names the extension's file."""

    def __init__(self, provider: Provider, config: ModelConfig, extensions: Sequence[LoadedExtension]) -> None:
        self.provider = provider
        self.tags = provider_tags(provider, config)
        plan = self._plan(config, extensions)
        self.active = plan.active
        self.plan = plan
        # the hot path only visits extensions that fold chunks, and each only until it passes them through
        self._chunkers = plan.chunkers  # (replaced, never changed in place: the plan is shared)
        self.folds_chunks = bool(self._chunkers)  # False: the deltas are the provider's, as they came
        self.chunking = self.folds_chunks  # False: `chunk` is (now) the provider's process_chunk alone
        self.state = state = provider.init(config)
        if "partial" not in state:
            state["partial"] = new_partial()
        state.setdefault("config", config)
        state.setdefault("request", {})
        state["provider_extensions"] = plan.names.copy()

    def _plan(self, config: ModelConfig, extensions: Sequence[LoadedExtension]) -> _Plan:
        entry = _PLANS.get(id(extensions))
        if entry is None or entry[0] is not extensions:
            if len(_PLANS) >= 32:
                _PLANS.clear()
            deciding = any(_overrides(e.extension, "is_enabled") for e in extensions)
            entry = _PLANS[id(extensions)] = (extensions, None if deciding else {})
        plans = entry[1]
        key = (self.provider.name, self.tags)
        plan = plans.get(key) if plans is not None else None
        if plan is None:
            plan = _Plan([e for e in extensions if self._gate(e, config)])
            if plans is not None:
                plans[key] = plan
        return plan

    def _gate(self, loaded: LoadedExtension, config: ModelConfig) -> bool:
        try:
            return loaded.applies(self.provider, config, self.tags)
        except Exception as exc:
            raise _failure(loaded, "is_enabled", exc) from exc

    def request(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        native, self.state = self.provider.initialize_request(messages, self.state)
        for loaded in self.plan.requesters:
            try:
                native, self.state = loaded.extension.initialize_request(native, self.state)
            except Exception as exc:
                raise _failure(loaded, "initialize_request", exc) from exc
        return native

    def chunk(self, chunk: Any) -> Deltas:
        state = self.state
        deltas = self.provider.process_chunk(chunk, state)
        loaded, method, through = None, "process_chunk", None
        try:
            for loaded, fold, through in self._chunkers:
                method = "process_chunk"
                deltas = fold(chunk, deltas, state)
                method = "passes_through"
                if through is not None and through(state):
                    self._chunkers = [c for c in self._chunkers if c[0] is not loaded]  # (the loop holds the old list)
        except Exception as exc:
            raise _failure(loaded, method, exc) from exc  # type: ignore[arg-type]
        self.chunking = bool(self._chunkers)
        return deltas

    def end(self) -> Deltas:
        reasoning, response = "", ""
        for loaded in self.plan.enders:
            try:
                r, c = loaded.extension.end_stream(self.state)
            except Exception as exc:
                raise _failure(loaded, "end_stream", exc) from exc
            reasoning, response = reasoning + r, response + c
        return reasoning, response

    def reply(self, streamed: Deltas, stopped: bool) -> ModelReply:
        """The provider's final reply; its text is what was streamed when extensions could reshape the
        deltas or an early stop cut the stream (think tags split off, text after the stop dropped)."""
        reply = self.provider.finalize(self.state)
        reasoning, content = streamed
        if stopped or self.folds_chunks:
            reply.content = content
            reply.reasoning = reasoning or reply.reasoning
        reply.stopped_early = stopped
        for loaded in self.plan.finishers:
            try:
                reply = loaded.extension.finalize(reply, self.state)
            except Exception as exc:
                raise _failure(loaded, "finalize", exc) from exc
        reply.extensions = list(self.state["provider_extensions"])
        return reply

    def completed(self, reply: ModelReply) -> None:
        """The reply is final (the driver applied early stop): providers that keep calls (cassettes) keep it."""
        done = getattr(self.provider, "completed", None)
        if done is not None:
            done(reply, self.state)


def _failure(loaded: LoadedExtension, method: str, exc: Exception) -> ProviderExtensionError:
    return ProviderExtensionError(
        f"provider extension {loaded.name} ({loaded.where()}) failed in {method}: {type(exc).__name__}: {exc}. "
        "Fix the file, or remove it from the providers/ folder; the model call was abandoned and history is unchanged")
