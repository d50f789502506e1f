"""Model calls of an agent: which provider and settings a role uses, the streamed chat call with its
call record (early stop, context-window retry, broken streams), utility calls, and record bookkeeping."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Awaitable, Callable

from a0nb.engine.extract import ToolRequest
from a0nb.engine.loop_data import LoopData
from a0nb.engine.protocols import ModelHost
from a0nb.engine.record_store import RecordStore
from a0nb.engine.records import CallRecord, Part
from a0nb.engine.stream_watch import LoopSink
from a0nb.errors import ConfigError, ModelError
from a0nb.providers.base import ContextWindowExceeded, ModelConfig, ModelReply, Provider, StreamBroken, common_prefix
from a0nb.providers.discovery import discover_providers
from a0nb.providers.extension import LoadedExtension, discover_provider_extensions
from a0nb.providers.registry import make_provider, no_model_message
from a0nb.providers.lattice_discovery import discover_lattice_features
from a0nb.providers.lattice_features import with_features
from a0nb.providers.stream import complete


class _ChunkSink:
    """Hands each streamed piece of a utility answer to a callback (reasoning is not passed on)."""

    def __init__(self, callback: Callable[[str], Awaitable[Any]]) -> None:
        self.callback = callback

    async def reasoning(self, delta: str, full: str) -> None:
        return None

    async def response(self, delta: str, full: str) -> str | None:
        await self.callback(delta)
        return None


class ModelCalls:
    """Held by an agent (`agent.models`): everything between a finished prompt and a finished reply,
    and the agent's call records (`records`; `current` is the chat call in progress)."""

    def __init__(self, host: ModelHost) -> None:
        self.host = host
        self.model_list: list[Any] | None = None  # a list of scripted replies given as `model=`
        self.records: list[CallRecord] = []
        self.current: CallRecord | None = None
        self.streamed = ""  # the reply streamed so far (kept in history if the turn is interrupted)
        self.store = RecordStore()  # finished records: shared where unchanged, spilled (record_keep) to disk
        # the streamed reply and the tool request the stream watch found in it (see take_parsed)
        self.parsed: tuple[str, ToolRequest] | None = None
        self.stream_plan: tuple[int, bool, bool] | None = None  # (Extensions.version, live, quiet): see LoopSink
        self._provider_exts: tuple[Any, int, list[LoadedExtension]] | None = None  # (hierarchy, generation, list)
        # role -> (settings, secrets, model list it was built from, the config each call gets a copy of)
        self._configs: dict[str, tuple[Any, Any, Any, ModelConfig]] = {}
        # (provider, hierarchy, its generation, lattice registry, its version, the provider with_features gave)
        self._featured: tuple[Any, Any, int, Any, int, Provider] | None = None
        self._masked: tuple[Any, list[Part], list[Part]] | None = None  # (secret set, parts, masked) of the last request

    def take_parsed(self, text: str) -> ToolRequest | None:
        """The tool request in `text` if the stream watch already parsed this very reply (once: the
        request's args are then the caller's alone); None means parse it."""
        parsed, self.parsed = self.parsed, None
        return parsed[1] if parsed is not None and parsed[0] is text else None

    def spec(self, role: str = "chat") -> str:
        if role == "chat" and self.model_list is not None:
            return "scripted:<list>"
        s = self.host.settings
        return (s.model if role == "chat" else s.utility_model) or ""

    def config(self, role: str = "chat") -> ModelConfig:
        """The role's ModelConfig, a fresh copy each call (extensions may edit it). Built again only when
        the settings (a new object whenever a layer, `%config` or A0NB_* changed), the secrets (likewise) or
        the scripted list changed; with `native_tools` the tool schemas are read every call."""
        s, secrets = self.host.settings, self.host.secrets
        cached = self._configs.get(role)
        if cached is None or cached[0] is not s or cached[1] is not secrets or cached[2] is not self.model_list:
            cached = (s, secrets, self.model_list, self._build_config(role, s, secrets))
            self._configs[role] = cached
        config = cached[3].copy()
        if s.native_tools and role == "chat":
            config.tools = self.native_tool_schemas()
        return config

    def _build_config(self, role: str, s: Any, secrets: Any) -> ModelConfig:
        kwargs = s.model_kwargs if role == "chat" else s.utility_model_kwargs
        params: dict[str, Any] = {k: v for k, v in (kwargs or {}).items() if not str(k).startswith("_")}
        if s.temperature is not None:
            params["temperature"] = s.temperature
        if secrets:
            params["_secret_values"] = secrets.items()
            params["_credentials"] = list(secrets.credentials)
        if s.cassette_mode != "strict":
            params["_cassette_mode"] = s.cassette_mode
        chat = role == "chat"
        return ModelConfig(spec=self.spec(role), role="chat" if chat else "utility", params=params,
                           api_base=s.api_base if chat else s.utility_api_base,
                           api_key_env=s.api_key_env if chat else s.utility_api_key_env,
                           ctx_length=s.ctx_length if chat else s.utility_ctx_length,
                           history_share=s.history_share, retries=s.retries, backoff=s.backoff)

    def provider(self, role: str = "chat") -> Provider:
        spec, providers = self.spec(role), self.host.shared.providers
        if role == "chat" and self.model_list is not None:
            key = f"list:{id(self.model_list)}"
            if key not in providers:
                providers[key] = make_provider(self.model_list, self.host.workdir)
            return providers[key]
        if not spec:
            raise ConfigError(no_model_message() if role == "chat" else "no utility model configured")
        if spec not in providers:
            providers[spec] = make_provider(spec, self.host.workdir, self.custom_providers())
        return providers[spec]

    def forget_model_list(self) -> None:
        """Drop the provider cached for the current list (the next list may reuse a freed list's id)."""
        if self.model_list is not None:
            self.host.shared.providers.pop(f"list:{id(self.model_list)}", None)

    def custom_providers(self) -> dict[str, Any]:
        shared = self.host.shared
        return discover_providers(self.host.hierarchy, self.host.loader, shared.lattice)

    def provider_extensions(self) -> list[LoadedExtension]:
        """Provider extensions from the `providers/` folders of every root (same file name: higher root wins);
        the hierarchy's list, looked up again when it changed (its generation: a file added, edited, removed)."""
        hierarchy, cached = self.host.hierarchy, self._provider_exts
        if cached is None or cached[0] is not hierarchy or cached[1] != hierarchy.generation:
            found = discover_provider_extensions(hierarchy, self.host.loader)
            cached = self._provider_exts = (hierarchy, hierarchy.generation, found)
        return cached[2]

    def chat_provider(self) -> Provider:
        """The chat provider with the Crystal Lattice features around it (`with_features`), looked at again only
        when the provider, the hierarchy's files (its generation) or the registered features (their version) changed."""
        provider, hierarchy, registry = self.provider("chat"), self.host.hierarchy, self.host.shared.lattice
        version = registry.version if registry is not None else -1
        cached = self._featured
        if cached is None or cached[0] is not provider or cached[1] is not hierarchy \
                or cached[2] != hierarchy.generation or cached[3] is not registry or cached[4] != version:
            featured = with_features(provider, self.lattice_features)
            cached = self._featured = (provider, hierarchy, hierarchy.generation, registry, version, featured)
        return cached[5]

    def lattice_features(self) -> list[Any]:
        """Crystal Lattice FeaturePlugins (features/ folders, then registered ones): they run around any provider."""
        registry = self.host.shared.lattice
        return [*discover_lattice_features(self.host.hierarchy, self.host.loader), *(registry.features if registry else [])]

    def native_tool_schemas(self) -> list[dict[str, Any]]:
        """The agent's tools as OpenAI function schemas (sent when the setting `native_tools` is on)."""
        return [info.native_schema() for info in self.host.tools.available().values()]

    async def chat(self, ld: LoopData, messages: list[dict[str, Any]]) -> ModelReply:
        host, record = self.host, ld.record
        call_data: dict[str, Any] = {"messages": messages, "model": self.spec("chat"),
                                     "provider": self.chat_provider(),
                                     "config": self.config("chat")}
        await host.fire("chat_model_call_before", call_data=call_data)
        self.streamed = ""
        try:
            sink = LoopSink(self, ld)
            try:
                reply = await complete(call_data["provider"], call_data["messages"], call_data["config"], sink,
                                       self.provider_extensions())
            finally:
                sink.close()
        except ContextWindowExceeded as exc:
            _fail(record, exc)  # the failed attempt keeps its record (and says why), whether or not a retry follows
            if ld.ctx_retried or not await self.compact(force=True):
                raise
            ld.ctx_retried = True
            return await self.chat(ld, await host.prepare_prompt(ld))
        except StreamBroken as exc:
            _fail(record, exc)
            if exc.partial.strip():
                host.hist_add_ai_response(exc.partial)
            self.streamed = ""
            raise ModelError(f"{exc} — the partial reply was kept in history; ask again to continue") from exc
        except ModelError as exc:
            _fail(record, exc)
            raise
        _fill(record, reply)
        watch = sink.watch
        self.parsed = (reply.content, watch.parsed) if watch.parsed is not None and reply.content is watch.request else None
        if record is not None:
            self.mask_record(record)
        flag = sink.flag  # (the checkpoints below called when they have work to do, as the sink's)
        await host.fire("chat_model_call_after", call_data=call_data, response=reply.content, reasoning=reply.reasoning)
        if flag.raised or host.intervention is not None:
            host.checkpoint(ld)
        await host.fire("reasoning_stream_end", loop_data=ld)
        if flag.raised or host.intervention is not None:
            host.checkpoint(ld)
        await host.fire("response_stream_end", loop_data=ld)
        if flag.raised or host.intervention is not None:
            host.checkpoint(ld)
        self.streamed = ""
        return reply

    async def utility(self, system: str, message: str, purpose: str = "summary",
                      on_chunk: Callable[[str], Awaitable[Any]] | None = None,
                      background: bool = False) -> str | None:
        """A utility call (summaries, compaction); None when no utility model is configured.
        `on_chunk` gets each streamed piece of the answer; `background` only tells extensions (as
        Agent Zero's flag, which hides rate-limit waits: a0nb shows none)."""
        if not self.spec("utility"):
            return None
        host, secrets = self.host, self.host.secrets
        if secrets:
            system, message = secrets.mask_text(system), secrets.mask_text(message)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": message}]
        c = host.shared.counter
        parts = [Part("system", "system: utility instructions", system, c.count(system), 0, purpose),
                 Part("user", f"utility input ({purpose})", message, c.count(message), 1, purpose)]
        record = self.new_record("utility", messages, parts, -1)
        record.purpose = purpose
        call_data: dict[str, Any] = {"model": record.model, "system": system, "message": message, "purpose": purpose,
                                     "callback": on_chunk, "background": background}
        await host.fire("util_model_call_before", call_data=call_data)
        sink = _ChunkSink(call_data["callback"]) if call_data["callback"] is not None else None
        try:
            reply = await complete(self.provider("utility"), messages, self.config("utility"), sink,
                                   extensions=self.provider_extensions())
        except ModelError as exc:
            _fail(record, exc)
            self.mask_record(record)
            await host.fire("call_recorded", record=record)
            raise
        _fill(record, reply)
        self.mask_record(record)
        await host.fire("util_model_call_after", call_data=call_data, response=reply.content)
        await host.fire("call_recorded", record=record)
        return reply.content

    async def compact(self, force: bool = False) -> bool:
        """Compact now (used before a retry after a context-window error); True if anything changed."""
        if self.host.compactor is None:
            return False
        return await self.host.compactor(self.host, force=force) is not None

    def new_record(self, role: str, messages: list[dict[str, Any]], parts: list[Part], iteration: int) -> CallRecord:
        host = self.host
        host.shared.call_index += 1
        parent = host.superior_record
        turn = host.turns[-1].index if host.turns else (parent.turn if parent is not None else 0)
        record = CallRecord(index=host.shared.call_index, role="chat" if role == "chat" else "utility",
                            model=self.spec(role), messages=messages, parts=parts, turn=turn, iteration=iteration,
                            agent=host.number, parent=parent.index if parent is not None else None)
        self.records.append(record)
        if parent is not None:
            parent.children.append(record)
        if role == "chat":
            self.current = record
        return record

    async def finish_record(self, ld: LoopData) -> None:
        record, ld.record = ld.record, None
        if record is not None:
            try:
                self.mask_record(record)
                await self.host.fire("call_recorded", record=record)
            finally:  # (settled whatever happens: from now on it holds no dict a caller is handed again)
                self.store.finish(record, self.host.settings.record_keep)

    def masked(self, messages: list[dict[str, Any]], parts: list[Part]) -> tuple[list[dict[str, Any]], list[Part]]:
        """A request as it may leave the agent: every secret (and its encoded forms) replaced by its alias."""
        secrets = self.host.secrets
        if not secrets:
            return messages, parts
        # the leading parts equal to the last request's (a part is immutable) mask as they did under the same
        # secret set: only the rest is looked at
        last = self._masked
        n = common_prefix(last[1], parts) if last is not None and last[0] is secrets else 0
        rest = parts[n:]
        texts = secrets.mask_texts([part.text for part in rest])  # (history texts: remembered, one lookup each)
        masked_parts = last[2][:n] if n else []  # type: ignore[index]
        masked_parts += [part if text == part.text else replace(part, text=text) for part, text in zip(rest, texts)]
        self._masked = (secrets, list(parts), masked_parts)
        return secrets.mask_messages(messages), masked_parts

    def mask_record(self, record: CallRecord) -> None:
        """What the model sent back (reply, tool request, errors) is masked like what was sent to it."""
        secrets = self.host.secrets
        if secrets:
            record.response, record.reasoning = secrets.mask_text(record.response), secrets.mask_text(record.reasoning)
            record.tool_request = secrets.mask(record.tool_request)
            record.tool_result = secrets.mask(record.tool_result)
            record.error, record.diagnostics = secrets.mask(record.error), secrets.mask(record.diagnostics)


def _fill(record: CallRecord | None, reply: ModelReply) -> None:
    if record is None:
        return
    record.response, record.reasoning = reply.content, reply.reasoning
    record.usage, record.cost, record.latency = dict(reply.usage), reply.cost, reply.latency
    record.provider_extensions = list(reply.extensions)
    record.metadata = dict(reply.metadata)
    if reply.model:
        record.model = reply.model


def _fail(record: CallRecord | None, exc: BaseException) -> None:
    if record is not None:
        record.error = f"{type(exc).__name__}: {exc}"
