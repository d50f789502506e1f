"""Crystal Lattice's ToolPlugin (payload-first `execute_tool`, `stream_tool` parts, two audiences:
`format_tool_result` for the model, `to_display_format` for the human) and the a0nb `Tool` that runs one."""
from __future__ import annotations

import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Dict, Iterator, List

from a0nb.engine.tool import Response, Tool, in_daemon_thread
from a0nb.files.contracts import ContractError, overrides, where, where_method

TOOL_REQUIRED = ("execute_tool",)
TOOL_SIGNATURES = {"execute_tool": "execute_tool(self, tool_name, payload, state, *, payload_kind=None, "
                                   "payload_format=None, payload_metadata=None, tool_call=None) -> dict"}


class ToolContractError(RuntimeError):
    """A tool plugin broke its contract while running; reported to the model as the tool's error."""


class ToolPlugin:
    """Subclass and define `get_tool_schemas(state)` and `execute_tool(tool_name, payload, state, *, ...)`.
    Each function schema's name is a tool name the model can call (`add`), and `file:name` works too
    (`calculator:add`). The tool keeps its own state from `init(config)` across calls."""

    name: ClassVar[str] = ""
    version: ClassVar[str] = "0.0.0"

    def get_config_schema(self) -> Dict[str, Any]:
        return {}

    def get_ui_elements(self, config: Dict[str, Any] | None = None, tags: List[str] | None = None,
                        models: List[Dict[str, Any]] | None = None) -> List[Dict[str, Any]]:
        return []

    def init(self, config: Dict[str, Any]) -> Dict[str, Any]:
        return {"config": config}

    def get_tool_schemas(self, state: Dict[str, Any]) -> List[Dict[str, Any]]:
        return []

    def can_handle_tool_call(self, tool_name: str | None, payload: Any, state: Dict[str, Any], **kwargs: Any) -> bool | None:
        return None

    def format_tool_result(self, result: Any, state: Dict[str, Any]) -> Any:
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)

    def format_tool_call_preview(self, tool_name: str | None, payload: Any, state: Dict[str, Any], **kwargs: Any) -> str:
        return f"{tool_name}({json.dumps(payload, ensure_ascii=False, default=str)})"

    def stream_tool(self, tool_name: str | None, payload: Any, state: Dict[str, Any], **kwargs: Any) -> Iterator[Dict[str, Any]]:
        """Default: `execute_tool`'s result as the only item (no display parts)."""
        yield self.execute_tool(tool_name, payload, state, **kwargs)  # type: ignore[attr-defined]

    def to_display_format(self, text: str, result: Any, state: Dict[str, Any]) -> Dict[str, Any]:
        return {"type": "text", "content": text}


def schema_names(schemas: List[Dict[str, Any]]) -> list[str]:
    out = []
    for s in schemas or ():
        fn = s.get("function", s) if isinstance(s, dict) else {}
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            out.append(fn["name"])
    return out


@dataclass
class LoadedTool:
    """One tool plugin instance with its own state (from `init`), its schemas and its file."""

    instance: Any
    path: Path | None = None
    state: dict[str, Any] = field(default_factory=dict)
    schemas: list[dict[str, Any]] = field(default_factory=list)
    claimed: str | None = None  # a name no schema declares, taken by `can_handle_tool_call`

    @classmethod
    def create(cls, plugin_cls: type, path: Path | None, config: dict[str, Any] | None = None) -> "LoadedTool":
        if isinstance(plugin_cls, type) and issubclass(plugin_cls, ToolPlugin) \
                and not overrides(plugin_cls, ToolPlugin, "execute_tool"):
            raise ContractError(f"{where(plugin_cls, path)} does not follow the ToolPlugin contract: it defines no "
                                f"execute_tool. Add {TOOL_SIGNATURES['execute_tool']}")
        instance = plugin_cls()
        loaded = cls(instance, path)
        init = getattr(instance, "init", None)
        if callable(init):  # the config: defaults from get_config_schema() under what the caller gives
            state = init({**schema_defaults(instance), **(config or {})})
            loaded.state = state if isinstance(state, dict) else {}
        try:
            loaded.schemas = list(instance.get_tool_schemas(loaded.state) or [])
        except Exception as exc:
            raise ContractError(f"{where_method(instance, 'get_tool_schemas', path)} raised {type(exc).__name__}: {exc} "
                                "(contract: get_tool_schemas(state) -> list)") from exc
        return loaded

    @property
    def names(self) -> list[str]:
        return schema_names(self.schemas)

    def claims(self, tool_name: str, payload: Any) -> bool:
        """The seed's optional routing hook: `can_handle_tool_call(tool_name, payload, state)` is True (None
        and False pass the call on). A plugin without the hook (or with the base's) claims nothing."""
        obj = self.instance
        if not callable(getattr(obj, "can_handle_tool_call", None)) or (
                isinstance(obj, ToolPlugin) and not overrides(type(obj), ToolPlugin, "can_handle_tool_call")):
            return False
        try:
            return obj.can_handle_tool_call(tool_name, payload, self.state) is True
        except Exception as exc:
            raise ContractError(f"{where_method(obj, 'can_handle_tool_call', self.path)} raised {type(exc).__name__}: "
                                f"{exc} (contract: can_handle_tool_call(tool_name, payload, state, ...) -> bool | None)"
                                ) from exc

    def preview(self, tool_name: str, payload: Any) -> str | None:
        """`format_tool_call_preview(tool_name, payload, state)` when the plugin defines its own, else None."""
        obj = self.instance
        if not callable(getattr(obj, "format_tool_call_preview", None)) or (
                isinstance(obj, ToolPlugin) and not overrides(type(obj), ToolPlugin, "format_tool_call_preview")):
            return None
        text = obj.format_tool_call_preview(tool_name, payload, self.state)
        return text if isinstance(text, str) and text else None


def schema_defaults(instance: Any) -> dict[str, Any]:
    """`{key: default}` from the plugin's `get_config_schema()` (`{"unit": {"type": ..., "default": "cm"}}`)."""
    get = getattr(instance, "get_config_schema", None)
    schema = get() if callable(get) else {}
    return {k: v["default"] for k, v in (schema or {}).items() if isinstance(v, dict) and "default" in v}


def _accepts(fn: Any, *names: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return any(p.kind is p.VAR_KEYWORD for p in params.values()) or all(n in params for n in names)


class PluginTool(Tool):
    """Runs a tool plugin: `stream_tool` parts are progress (the live view; never history), the final result
    goes through `format_tool_result` to the model, `to_display_format` goes to `metadata.display`."""

    def __init__(self, *args: Any, plugin: LoadedTool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plugin = plugin
        self.display: Any = None

    @property
    def tool_name(self) -> str:
        """The name handed to execute_tool: the method (`calculator:add`), else the called name when a schema
        has it, else the plugin's only schema name, else the file's name."""
        names = self.plugin.names
        if self.plugin.claimed:
            return self.plugin.claimed
        if self.method:
            return self.method
        if self.name in names or len(names) != 1:
            return self.name
        return names[0]

    async def before_execution(self, **kwargs: Any) -> None:
        """A plugin's own `format_tool_call_preview` is shown first in the live view (`metadata.preview`)."""
        preview = self.plugin.preview(self.tool_name, dict(kwargs))
        if preview:
            self.agent.fire_sync("tool_output_update", ctx={"content": preview, "tool": self.full_name,
                                                              "metadata": {"preview": preview}})

    async def execute(self, **kwargs: Any) -> Response:
        obj, state = self.plugin.instance, self.plugin.state
        payload = dict(kwargs)
        meta = {"payload_kind": "json", "payload_format": "object", "payload_metadata": None,
                "tool_call": {"name": self.tool_name, "arguments": payload}}
        streaming = not isinstance(obj, ToolPlugin) or overrides(type(obj), ToolPlugin, "stream_tool")
        if streaming and callable(getattr(obj, "stream_tool", None)):
            result = await self._stream(obj.stream_tool, payload, state, meta)
        else:
            fn = obj.execute_tool
            call = meta if _accepts(fn, "payload_kind") else {}
            result = await in_daemon_thread(lambda: fn(self.tool_name, payload, state, **call), {})
            if inspect.isawaitable(result):
                result = await result
        return self._respond(obj, result, state)

    async def _stream(self, stream_tool: Any, payload: Any, state: dict[str, Any], meta: dict[str, Any]) -> Any:
        call = meta if _accepts(stream_tool, "payload_kind") else {}
        items = stream_tool(self.tool_name, payload, state, **call)
        result: Any = None
        if hasattr(items, "__aiter__"):
            async for item in items:
                result = self._item(item, result)
        else:
            for item in items:
                result = self._item(item, result)
        if result is None:  # a tool's failure goes back to the model (like any tool exception), naming the file
            raise ToolContractError(f"{where_method(self.plugin.instance, 'stream_tool', self.plugin.path)} yielded no final result "
                                "(a dict with \"success\"); yield display parts as {\"part\": ...} and then the result")
        return result

    def _item(self, item: Any, result: Any) -> Any:
        if isinstance(item, dict) and "part" in item and "success" not in item:
            part = item["part"]
            text = part.get("content", "") if isinstance(part, dict) else str(part)
            self.add_progress(("\n" if self.progress else "") + str(text))
            return result
        return item

    def _respond(self, obj: Any, result: Any, state: dict[str, Any]) -> Response:
        fmt = getattr(obj, "format_tool_result", None)
        text = fmt(result, state) if callable(fmt) else result
        native = isinstance(text, dict) and text.get("type") == "provider_native_tool_result"
        message = json.dumps(text, ensure_ascii=False, default=str) if not isinstance(text, str) else text
        display = getattr(obj, "to_display_format", None)
        if callable(display):
            self.display = display("" if native else message, result, state) if _accepts_three(display) else display(result)
        return Response(message=message)

    async def after_execution(self, response: Response, **kwargs: Any) -> None:
        """The display form goes to displays (`tool_output_update` with `metadata.display`), never to history."""
        if self.display is not None:
            shown = self.display.get("content", "") if isinstance(self.display, dict) else self.display
            self.agent.fire_sync("tool_output_update", ctx={"content": str(shown), "tool": self.full_name,
                                                              "metadata": {"display": self.display}})
        await self.agent.hist_add_tool_result(self.full_name, response.message, **(response.additional or {}))


def _accepts_three(fn: Any) -> bool:
    try:
        params = [p for p in inspect.signature(fn).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return True
    return len(params) >= 3


__all__ = ["ToolPlugin", "is_tool_plugin", "LoadedTool", "PluginTool", "schema_names", "TOOL_REQUIRED", "TOOL_SIGNATURES"]


def is_tool_plugin(obj: Any) -> bool:
    """A ToolPlugin subclass, or a class with the contract's two methods (duck-typed plugins)."""
    return isinstance(obj, type) and (issubclass(obj, ToolPlugin) or (
        hasattr(obj, "get_tool_schemas") and hasattr(obj, "execute_tool")))
