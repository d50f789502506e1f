"""Crystal Lattice's `AgentCore` outside an agent: register plugins, then `send_request(session, config)`
runs one request through the same LatticeRun an agent uses (tools' init and schemas first, seed order)."""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Iterator, Mapping, Sequence

from a0nb.files.contracts import ContractError, call, where
from a0nb.providers.lattice import LatticeRun, Loaded, config_defaults
from a0nb.providers.lattice_discovery import LatticeRegistry

Msg = dict[str, Any]


@dataclass(frozen=True)
class Session:
    """Frozen: every operation returns a new session."""

    id: str
    messages: tuple[Msg, ...] = ()
    data: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def add(self, *messages: Msg) -> "Session":
        return replace(self, messages=(*self.messages, *messages))


class LatticeCore:
    """`register_provider(cls, extensions=[...])`, `register_feature(cls)`, `register_tool(cls)`, then
    `create_session()`, `add_message(session, role, content)`, `send_request(session, config)` -> (session, finals)
    with `config["provider"]` naming the provider."""

    def __init__(self) -> None:
        self.registry = LatticeRegistry()
        self.tools: list[type] = []

    # -- registration ------------------------------------------------------------------------------
    def register_provider(self, cls: type, extensions: Sequence[type] = ()) -> None:
        self.registry.register_provider(cls, extensions)

    def register_feature(self, cls: type) -> None:
        self.registry.register_feature(cls)

    def register_tool(self, cls: type) -> None:
        if not callable(getattr(cls, "execute_tool", None)) or not callable(getattr(cls, "get_tool_schemas", None)):
            raise ContractError(f"{where(cls)} does not follow the ToolPlugin contract: it needs get_tool_schemas(state) "
                                "and execute_tool(tool_name, payload, state, ...)")
        self.tools.append(cls)

    # -- sessions ----------------------------------------------------------------------------------
    def create_session(self) -> Session:
        return Session(uuid.uuid4().hex)

    def add_message(self, session: Session, role: str, content: Any, metadata: Mapping[str, Any] | None = None) -> Session:
        return session.add({"role": role, "content": content, "metadata": dict(metadata or {})})

    # -- tools -------------------------------------------------------------------------------------
    def _tool_states(self, config: Mapping[str, Any]) -> list[tuple[Any, dict[str, Any]]]:
        out = []
        for cls in self.tools:
            tool = cls()
            cfg = {**config_defaults([tool]), **config}
            state = call(tool, "init", "init(config) -> state", cfg) if hasattr(tool, "init") else {}
            out.append((tool, state if isinstance(state, dict) else {}))
        return out

    def get_tool_schemas(self, config: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Each tool runs `init`, then `get_tool_schemas` (the seed's first request step)."""
        schemas: list[dict[str, Any]] = []
        for tool, state in self._tool_states(config):
            schemas += call(tool, "get_tool_schemas", "get_tool_schemas(state) -> list", state) or []
        return schemas

    def execute_tool_calls(self, tool_calls: Sequence[Mapping[str, Any]], config: Mapping[str, Any]) -> list[Msg]:
        """OpenAI-shaped `tool_calls` -> `role="tool"` messages (content from `format_tool_result`)."""
        import json
        tools = self._tool_states(config)
        out: list[Msg] = []
        for tc in tool_calls:
            fn = tc.get("function", tc)
            name, args = fn.get("name"), fn.get("arguments", {})
            payload = json.loads(args) if isinstance(args, str) and args.strip() else (args or {})
            tool, state = next(((t, s) for t, s in tools if name in _names(t, s)), (None, {}))
            if tool is None:  # no schema names it: the first tool whose can_handle_tool_call says True
                tool, state = next(((t, s) for t, s in tools if _claims(t, name, payload, s)), (None, {}))
            metadata: dict[str, Any] = {}
            if tool is None:
                text: Any = f"Error: no tool named {name!r}"
            else:
                result = _run_tool(tool, name, payload, state, dict(tc))
                text = tool.format_tool_result(result, state)
                if callable(getattr(tool, "to_display_format", None)):
                    native = isinstance(text, dict) and text.get("type") == "provider_native_tool_result"
                    metadata["display"] = tool.to_display_format("" if native else str(text), result, state)
            out.append({"role": "tool", "content": text if isinstance(text, str) else json.dumps(text),
                        "tool_call_id": tc.get("id"), "metadata": metadata})
        return out

    # -- requests ----------------------------------------------------------------------------------
    def _run(self, config: Mapping[str, Any]) -> LatticeRun:
        name = config.get("provider")
        if name not in self.registry.providers:
            known = ", ".join(sorted(self.registry.providers)) or "none registered"
            raise ContractError(f"config provider {name!r} is not registered (registered providers: {known}); "
                                "register_provider(YourProvider) first, with YourProvider.name == config['provider']")
        provider, bound = self.registry.providers[str(name)]
        cfg = dict(config)
        cfg["tools"] = self.get_tool_schemas(config)
        defaults = config_defaults([provider.instance, *(e.instance for e in bound),
                                    *(f.instance for f in self.registry.features)])
        return LatticeRun(provider, bound, self.registry.features, {**defaults, **cfg})

    def send_request(self, session: Session, config: Mapping[str, Any]) -> tuple[Session, list[Msg]]:
        finals: list[Msg] = []
        for event in self.send_request_stream(session, config):
            if event["type"] == "final":
                return event["session"], event["finals"]
        return session, finals

    def send_request_stream(self, session: Session, config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """`{"type": "partial", "message": ...}` per partial, then `{"type": "final", "session", "finals"}`."""
        run = self._run(config)
        run.initialize_request(run.to_native(list(session.messages)))
        if run.streams:
            chunks = run.stream()
            if hasattr(chunks, "__aiter__"):
                raise ContractError(f"{run.provider.where()}.stream_api is async; AgentCore.send_request is "
                                    "synchronous (use the provider through an a0nb Agent, which awaits it)")
            for chunk in chunks:
                for partial in run.chunk(chunk):
                    yield {"type": "partial", "message": partial}
        else:
            for partial in run.call_api():
                yield {"type": "partial", "message": partial}
        finals = run.finish()
        yield {"type": "final", "session": session.add(*finals), "finals": finals}

    # -- features ----------------------------------------------------------------------------------
    def get_completions(self, config: Mapping[str, Any], text: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for f in self.registry.features:
            out += call(f.instance, "get_completions", "get_completions(config, text) -> list[dict]", dict(config),
                        text, path=f.path) or []
        return out

    def apply_feature_completion(self, config: Mapping[str, Any], text: str, completion: Mapping[str, Any]) -> str:
        """The first feature whose `apply_completion` returns a non-empty string decides."""
        for f in self.registry.features:
            snippet = call(f.instance, "apply_completion", "apply_completion(config, text, completion) -> str",
                           dict(config), text, dict(completion), path=f.path)
            if snippet:
                return str(snippet)
        return ""


def _run_tool(tool: Any, name: Any, payload: Any, state: dict[str, Any], tool_call: dict[str, Any]) -> Any:
    """`stream_tool` when the tool has one (display parts are skipped: no UI here), else `execute_tool`."""
    kwargs = {"payload_kind": "json", "payload_format": "object", "payload_metadata": None, "tool_call": tool_call}
    if callable(getattr(tool, "stream_tool", None)):
        result = None
        for item in tool.stream_tool(name, payload, state, **kwargs):
            if not (isinstance(item, dict) and "part" in item and "success" not in item):
                result = item
        return result
    return tool.execute_tool(name, payload, state, **kwargs)


def _claims(tool: Any, name: Any, payload: Any, state: dict[str, Any]) -> bool:
    if not callable(getattr(tool, "can_handle_tool_call", None)):
        return False
    contract = "can_handle_tool_call(tool_name, payload, state, ...) -> bool | None"
    return call(tool, "can_handle_tool_call", contract, name, payload, state) is True


def _names(tool: Any, state: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for s in tool.get_tool_schemas(state) or ():
        fn = s.get("function", s)
        out.append(fn.get("name"))
    return out


__all__ = ["LatticeCore", "Session", "Loaded"]
