"""Model calls of an agent: which provider and settings a role uses, the streamed chat call with its
call record (early stop, context-window retry, broken streams), utility calls, and record bookkeeping."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from a0nb.engine import loop
from a0nb.errors import ConfigError, ModelError
from a0nb.engine.extract import ToolRequest, first_closed_object, parse_tool_request
from a0nb.providers.base import ContextWindowExceeded, ModelConfig, ModelReply, Provider, StreamBroken
from a0nb.providers.stream import complete
from a0nb.providers.extension import LoadedExtension, discover_provider_extensions
from a0nb.providers.registry import make_provider, no_model_message
from a0nb.engine.records import CallRecord, Part

if TYPE_CHECKING:
    from a0nb.engine.agent import Agent


class ModelCalls:
    """Mixed into `Agent`: everything between a finished prompt and a finished reply."""

    def model_spec(self, role: str = "chat") -> str:
        if role == "chat" and self._model_list is not None:
            return "scripted:<list>"
        spec = self.settings.model if role == "chat" else self.settings.utility_model
        return spec or ""

    def model_config(self, role: str = "chat") -> ModelConfig:
        s = self.settings
        kwargs = s.model_kwargs if role == "chat" else s.utility_model_kwargs
        params: dict[str, Any] = {k: v for k, v in (kwargs or {}).items() if not str(k).startswith("_")}
        if s.temperature is not None:
            params["temperature"] = s.temperature
        if self.secrets:
            params["_secret_values"] = self.secrets.items()
        if s.cassette_mode != "strict":
            params["_cassette_mode"] = s.cassette_mode
        return ModelConfig(spec=self.model_spec(role), role="chat" if role == "chat" else "utility", params=params,
                           api_base=s.api_base if role == "chat" else s.utility_api_base,
                           api_key_env=s.api_key_env if role == "chat" else s.utility_api_key_env,
                           ctx_length=s.ctx_length if role == "chat" else s.utility_ctx_length,
                           history_share=s.history_share, retries=s.retries, backoff=s.backoff,
                           tools=self.native_tool_schemas() if s.native_tools and role == "chat" else None)

    def provider(self, role: str = "chat") -> Provider:
        spec = self.model_spec(role)
        if role == "chat" and self._model_list is not None:
            key: str = f"list:{id(self._model_list)}"
            if key not in self.shared.providers:
                self.shared.providers[key] = make_provider(self._model_list, self.workdir)
            return self.shared.providers[key]
        if not spec:
            raise ConfigError(no_model_message() if role == "chat" else "no utility model configured")
        if spec not in self.shared.providers:
            self.shared.providers[spec] = make_provider(spec, self.workdir, self._custom_providers())
        return self.shared.providers[spec]

    def _custom_providers(self) -> dict[str, Any]:
        from a0nb.providers.discovery import discover_providers
        return discover_providers(self.hierarchy, self.loader, self.shared.data.get("_lattice_registry"))  # type: ignore[attr-defined]

    def provider_extensions(self) -> list[LoadedExtension]:
        """Provider extensions from the `providers/` folders of every root (same file name: higher root wins)."""
        return discover_provider_extensions(self.hierarchy, self.loader)

    def native_tool_schemas(self) -> list[dict[str, Any]]:
        """The agent's tools as OpenAI function schemas (sent when the setting `native_tools` is on)."""
        return [info.native_schema() for info in self.tools.available().values()]

    async def call_chat_model(self, ld: loop.LoopData, messages: list[dict[str, Any]]) -> ModelReply:
        record = ld.record
        call_data = {"messages": messages, "model": self.model_spec("chat"), "provider": self.provider("chat"),
                     "config": self.model_config("chat")}
        await self.fire("chat_model_call_before", call_data=call_data)
        self._streamed = ""
        try:
            reply = await complete(call_data["provider"], call_data["messages"], call_data["config"], _LoopSink(self, ld),
                                   self.provider_extensions())
        except ContextWindowExceeded as exc:
            _fail(record, exc)  # the failed attempt keeps its record (and says why), whether or not a retry follows
            if ld.params_persistent.get("_ctx_retry") or not await self.compact_history(force=True):
                raise
            ld.params_persistent["_ctx_retry"] = True
            messages = await self.prepare_prompt(ld)
            return await self.call_chat_model(ld, messages)
        except StreamBroken as exc:
            _fail(record, exc)
            if exc.partial.strip():
                self.hist_add_ai_response(exc.partial)
            self._streamed = ""
            raise ModelError(f"{exc} — the partial reply was kept in history; ask again to continue") from exc
        except ModelError as exc:
            _fail(record, exc)
            raise
        if record is not None:
            _fill(record, reply)
        await self.fire("chat_model_call_after", call_data=call_data, response=reply.content, reasoning=reply.reasoning)
        self.checkpoint(ld)
        await self.fire("reasoning_stream_end", loop_data=ld)
        self.checkpoint(ld)
        await self.fire("response_stream_end", loop_data=ld)
        self.checkpoint(ld)
        self._streamed = ""
        return reply

    async def call_utility_model(self, system: str, message: str, purpose: str = "summary") -> str | None:
        """A utility call (summaries, compaction); None when no utility model is configured."""
        if not self.model_spec("utility"):
            return None
        if self.secrets:
            system, message = self.secrets.mask_text(system), self.secrets.mask_text(message)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": message}]
        c = self.shared.counter
        parts = [Part("system", "system: utility instructions", system, c.count(system), 0, purpose),
                 Part("user", f"utility input ({purpose})", message, c.count(message), 1, purpose)]
        record = self._new_record("utility", messages, parts, -1, self.model_spec("utility"))
        record.purpose = purpose
        call_data = {"model": record.model, "system": system, "message": message, "purpose": purpose}
        await self.fire("util_model_call_before", call_data=call_data)
        try:
            reply = await complete(self.provider("utility"), messages, self.model_config("utility"),
                                   extensions=self.provider_extensions())
        except ModelError as exc:
            _fail(record, exc)
            await self.fire("call_recorded", record=record)
            raise
        _fill(record, reply)
        await self.fire("util_model_call_after", call_data=call_data, response=reply.content)
        await self.fire("call_recorded", record=record)
        return reply.content

    async def compact_history(self, force: bool = False) -> bool:
        """Compact now (used before a retry after a context-window error); True if anything changed."""
        compactor = self.data.get("_compactor")
        if compactor is None:
            return False
        event = await compactor(self, force=force)
        return event is not None

    def _new_record(self, role: str, messages: list[dict[str, Any]], parts: list[Part], iteration: int,
                    model: str) -> CallRecord:
        self.shared.call_index += 1
        parent = self.superior.current_record if self.superior is not None else None
        turn = self.turns[-1].index if self.turns else (parent.turn if parent is not None else 0)
        record = CallRecord(index=self.shared.call_index, role=role, model=model, messages=messages, parts=parts,
                            turn=turn, iteration=iteration, agent=self.number,
                            parent=parent.index if parent is not None else None)  # type: ignore[arg-type]
        self._calls.append(record)
        if parent is not None:
            parent.children.append(record)
        if role == "chat":
            self.current_record = record
        return record

    async def finish_record(self, ld: loop.LoopData) -> None:
        record, ld.record = ld.record, None
        if record is not None:
            await self.fire("call_recorded", record=record)


def _fill(record: CallRecord | None, reply: ModelReply) -> None:
    if record is None:
        return
    record.response, record.reasoning = reply.content, reply.reasoning
    record.usage, record.cost, record.latency = dict(reply.usage), reply.cost, reply.latency
    record.provider_extensions = list(reply.extensions)
    if reply.model:
        record.model = reply.model


def _fail(record: CallRecord | None, exc: BaseException) -> None:
    if record is not None:
        record.error = f"{type(exc).__name__}: {exc}"


class _LoopSink:
    """Stream deltas into the extension points, and stop at the first complete tool request."""

    def __init__(self, agent: Agent, ld: loop.LoopData) -> None:
        self.agent, self.ld = agent, ld
        self.has_stream_ext = bool(agent.extensions.resolve("response_stream"))

    async def reasoning(self, delta: str, full: str) -> None:
        self.agent.checkpoint(self.ld)
        await self.agent.fire("reasoning_stream_chunk", loop_data=self.ld, stream_data={"chunk": delta, "full": full})
        await self.agent.fire("reasoning_stream", loop_data=self.ld, text=full)

    async def response(self, delta: str, full: str) -> str | None:
        self.agent.checkpoint(self.ld)
        self.agent._streamed = full
        snapshot = None
        if "}" in delta:
            obj = first_closed_object(full)
            if obj is not None and isinstance(parse_tool_request(obj), ToolRequest):
                snapshot = obj
        stream_data = {"chunk": delta, "full": snapshot or full}
        await self.agent.fire("response_stream_chunk", loop_data=self.ld, stream_data=stream_data)
        if self.has_stream_ext and len(full) >= 25:
            from a0nb.engine.dirty_json import parse_dirty
            parsed = parse_dirty(full[full.find("{"):]) if "{" in full else None
            if isinstance(parsed, dict):
                await self.agent.fire("response_stream", loop_data=self.ld, text=full, parsed=parsed)
        return snapshot

