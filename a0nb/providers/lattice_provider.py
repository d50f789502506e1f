"""A Crystal Lattice ProviderPlugin as an a0nb provider: the model spec `name:model` runs a LatticeRun (the
provider, the provider extensions and the features, seed order) inside a0nb's streamed call."""
from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Callable

from a0nb.providers.base import ModelConfig, ModelReply, new_partial
from a0nb.providers.lattice import LatticeRun, Loaded, config_defaults, text_of

Chain = Callable[[], tuple[Loaded, list[Loaded], list[Loaded]]]   # (provider, extensions, features) now
_CALL = object()   # the one "chunk" of a provider that only has call_api


class LatticeProvider:
    """`chain` is asked at every request, so provider, extension and feature files edited next to the notebook
    apply to the next call."""

    def __init__(self, name: str, model: str, chain: Chain) -> None:
        self.name = name
        self.model = model
        self.chain = chain

    @property
    def plugin(self) -> Loaded:
        return self.chain()[0]

    def plugin_config(self, config: ModelConfig) -> dict[str, Any]:
        """The plugin's config dict: schema defaults < model params < `provider`/`model`/`tools` (schemas of the
        agent's tools when native tool calls are on)."""
        plugin, extensions, features = self.chain()
        out = config_defaults([plugin.instance, *(e.instance for e in extensions), *(f.instance for f in features)])
        out.update({k: v for k, v in config.params.items() if not str(k).startswith("_")})
        out["provider"] = self.name
        if self.model:
            out["model"] = self.model
        out["tools"] = list(config.tools or [])
        if config.api_base:
            out.setdefault("api_base", config.api_base)
        return out

    def tags(self, config: ModelConfig) -> set[str]:
        """The provider's `get_tags`, plus `reasoning`: a Crystal Lattice provider reports reasoning in its
        messages' `reasoning` field, so a0nb's <think>-tag splitter stays out of its stream."""
        get_tags = getattr(self.plugin.instance, "get_tags", None)
        tags = set(get_tags(self.plugin_config(config), []) or ()) if callable(get_tags) else set()
        return tags | {"reasoning"}

    def init(self, config: ModelConfig) -> dict[str, Any]:
        plugin, extensions, features = self.chain()
        run = LatticeRun(plugin, extensions, features, self.plugin_config(config))
        return {"lattice": run, "partial": new_partial(), "config": config, "request": {}}

    def initialize_request(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        run: LatticeRun = state["lattice"]
        return run.initialize_request(run.to_native(messages)), state

    async def stream(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> AsyncIterator[Any]:
        run: LatticeRun = state["lattice"]
        if not run.streams:
            yield _CALL
            return
        chunks = run.stream()
        if hasattr(chunks, "__aiter__"):
            async for chunk in chunks:
                yield chunk
            return
        for chunk in chunks:  # a sync iterator: give the loop a turn between chunks (interrupts, live view)
            yield chunk
            await asyncio.sleep(0)

    def process_chunk(self, chunk: Any, state: dict[str, Any]) -> tuple[str, str]:
        run: LatticeRun = state["lattice"]
        state["partial"]["chunks"] += 1
        if chunk is _CALL:
            run.call_api()
            return text_of(run.finals, "reasoning"), text_of(run.finals)
        partials = run.chunk(chunk)
        return text_of(partials, "reasoning"), text_of(partials)

    def finalize(self, state: dict[str, Any]) -> ModelReply:
        run: LatticeRun = state["lattice"]
        core = run.finish()
        state["lattice_finals"] = core
        final = next((m for m in reversed(core) if m.get("role", "assistant") == "assistant"), core[-1] if core else {})
        meta = dict(final.get("metadata") or {})
        native = run.finals[-1] if run.finals else {}
        usage = meta.get("usage") or native.get("usage") or {}
        return ModelReply(content=str(final.get("content") or ""),
                          reasoning=str(meta.get("reasoning") or native.get("reasoning") or ""),
                          tool_calls=list(meta.get("tool_calls") or native.get("tool_calls") or []),
                          usage=dict(usage) if isinstance(usage, dict) else {}, cost=meta.get("cost_usd"),
                          model=f"{self.name}:{run.config.get('model', '')}", chunks=state["partial"]["chunks"],
                          metadata=meta)


__all__ = ["LatticeProvider"]
