"""Tools: the `Tool` base class, `Response`, plain typed functions as tools, ToolPlugin classes
(Crystal Lattice contract) and the lookup of `tools/<name>.py` through the hierarchy."""
from __future__ import annotations

import asyncio
import inspect
import re
import typing
import weakref
from types import MappingProxyType
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

from a0nb.diagnostics import Diagnostics
from a0nb.errors import A0Error
from a0nb.files.hierarchy import Hierarchy
from a0nb.files.loader import ModuleLoader, module_name_for
from a0nb.files.extensions import REGISTERED
from a0nb.engine.tool_thread import in_daemon_thread


@dataclass
class Response:
    """What a tool returns: the text for the model, whether the turn ends, extra history metadata."""

    message: str
    break_loop: bool = False
    additional: dict[str, Any] | None = None


class Tool:
    """Base class for tool files. Subclasses implement `async execute(**kwargs) -> Response`."""

    description: str = ""
    # JSON schema of `tool_args`, for providers that take native tool schemas (setting `native_tools`);
    # the model-facing description stays in prompts/agent.system.tool.<name>.md
    parameters: dict[str, Any] = {}

    def __init__(self, agent: Any, name: str, method: str | None, args: dict[str, Any], message: str,
                 loop_data: Any = None, **kwargs: Any) -> None:
        self.agent = agent
        self.name = name
        self.method = method
        self.args = args
        self.message = message
        self.loop_data = loop_data
        self.progress = ""

    async def execute(self, **kwargs: Any) -> Response:
        raise NotImplementedError(f"tool {self.name} does not implement execute()")

    async def before_execution(self, **kwargs: Any) -> None:
        return None

    async def after_execution(self, response: Response, **kwargs: Any) -> None:
        """Default: the result goes to history as a tool result."""
        await self.agent.hist_add_tool_result(self.full_name, response.message, **(response.additional or {}))

    @property
    def full_name(self) -> str:
        return f"{self.name}:{self.method}" if self.method else self.name

    def set_progress(self, content: str) -> None:
        self.progress = content
        self.agent.emit_tool_progress(self, content)

    def add_progress(self, content: str) -> None:
        self.set_progress(self.progress + content)


ToolKind = Literal["class", "function", "plugin", "process"]


@dataclass(frozen=True)
class ToolInfo:
    name: str
    kind: ToolKind
    factory: Any
    path: Path | None
    root_label: str
    overrode: tuple[Path, ...] = ()
    description: str = ""
    schema: Mapping[str, Any] = field(default_factory=dict)

    def create(self, agent: Any, method: str | None, args: dict[str, Any], message: str, loop_data: Any) -> Tool:
        if self.kind == "class":
            return self.factory(agent=agent, name=self.name, method=method, args=args, message=message,
                                loop_data=loop_data)
        if self.kind == "function":
            fn, kept = self.factory, self.__dict__.get("_calling")
            code = getattr(fn, "__code__", None)
            if kept is None or kept[0] is not code or code is None:  # (a function whose code was replaced: again)
                kept = (code, _calling(fn))
                object.__setattr__(self, "_calling", kept)  # kept with this info, beside its (frozen) fields
            return FunctionTool(agent, self.name, method, args, message, loop_data, fn=fn, calling=kept[1])
        if self.kind == "process":  # tools/*.sh, *.js: out of process
            from a0nb.engine.process_tool import ProcessTool
            return ProcessTool(agent, self.name, method, args, message, loop_data, spec=self.factory)
        from a0nb.engine.tool_plugin import PluginTool  # Crystal Lattice tool plugins
        return PluginTool(agent, self.name, method, args, message, loop_data, plugin=self.factory)

    def prompt(self) -> str:
        """A prompt fragment for tools without an `agent.system.tool.<name>.md` file."""
        import json
        props = self.schema.get("properties", {}) if self.schema else {}
        args = ", ".join(f'"{k}": <{v.get("type", "value")}>' for k, v in props.items())
        example = json.dumps({"thoughts": ["..."], "headline": "...", "tool_name": self.name,
                              "tool_args": {k: f"<{v.get('type', 'value')}>" for k, v in props.items()}})
        lines = [f"### {self.name}", self.description.strip() or "(no description)"]
        if props:
            lines.append("arguments: " + args)
        lines += ["~~~json", example, "~~~"]
        return "\n".join(lines)

    def native_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI function schema; tools without a schema take any arguments."""
        parameters = dict(self.schema) if self.schema else {"type": "object", "properties": {},
                                                            "additionalProperties": True}
        return {"type": "function", "function": {
            "name": self.name, "description": self.description or f"the {self.name} tool (see the system prompt)",
            "parameters": parameters}}


class FunctionTool(Tool):
    """A plain (sync or async) function used as a tool; `agent` is injected when it asks for it."""

    def __init__(self, *args: Any, fn: Callable[..., Any], calling: tuple[Mapping[str, Any], bool, bool] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fn = fn
        self.calling = calling or _calling(fn)  # (its parameters, takes **kwargs, is a coroutine function)
        # a plain function runs in a worker thread, in a copy of the caller's context (tool_timeout needs no task)
        self.code_in_thread = not self.calling[2]

    async def execute(self, **kwargs: Any) -> Response:
        params, var_kw, is_async = self.calling
        # (kwargs is this call's own dict: used as it is when the function takes every argument in it)
        call = kwargs if var_kw or params.keys() >= kwargs.keys() else {k: v for k, v in kwargs.items() if k in params}
        if "agent" in params:
            call["agent"] = self.agent
        if is_async:
            result = await self.fn(**call)
        else:  # a blocking function must not block the loop, and the loop's tool_timeout must be able to leave it
            result = await in_daemon_thread(self.fn, call)
            if result.__class__ is not str and inspect.isawaitable(result):  # (in a task: a context of its own,
                result = await asyncio.ensure_future(result)                 # as the function had)
        if result.__class__ is str:
            return Response(message=result)
        if isinstance(result, Response):
            return result
        return Response(message=_to_text(result))


def _takes_var_kw(params: Mapping[str, inspect.Parameter]) -> bool:
    return any(p.kind is p.VAR_KEYWORD for p in params.values())


# fn -> (its code object, (parameters, takes **kwargs, is a coroutine function)); objects without code not kept
_CALLING: "weakref.WeakKeyDictionary[Any, tuple[Any, tuple[Mapping[str, Any], bool, bool]]]" = weakref.WeakKeyDictionary()


def _calling(fn: Callable[..., Any]) -> tuple[Mapping[str, Any], bool, bool]:
    """How a function tool is called, read from its signature once (again if its code is replaced)."""
    code = getattr(fn, "__code__", None)
    if code is not None:
        try:
            cached = _CALLING.get(fn)
        except TypeError:  # not weakly referenceable or not hashable: read it every time
            cached = None
        if cached is not None and cached[0] is code:
            return cached[1]
    params = inspect.signature(fn).parameters
    found = (params, _takes_var_kw(params), inspect.iscoroutinefunction(fn))
    if code is not None:
        try:
            _CALLING[fn] = (code, found)
        except TypeError:
            pass
    return found


def _to_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}


def function_schema(fn: Callable[..., Any]) -> tuple[str, dict[str, Any]]:
    """(description, JSON schema) from a function's docstring and signature."""
    doc = inspect.getdoc(fn) or ""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = {}
    props: dict[str, Any] = {}
    required = []
    for name, p in inspect.signature(fn).parameters.items():
        if name in ("agent", "self") or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        hint = hints.get(name, str)
        origin = typing.get_origin(hint) or hint
        prop: dict[str, Any] = {"type": _JSON_TYPES.get(origin, "string")}
        m = re.search(rf"^\s*{re.escape(name)}\s*(?:\([^)]*\))?\s*:\s*(.+)$", doc, re.M)
        if m:
            prop["description"] = m.group(1).strip()
        props[name] = prop
        if p.default is p.empty:
            required.append(name)
    summary = doc.split("\n\n")[0].strip()
    return summary, {"type": "object", "properties": props, "required": required}


def plugin_schema(schemas: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    if not schemas:
        return "", {}
    s = schemas[0]
    fn = s.get("function", s)
    return str(fn.get("description", "")), dict(fn.get("parameters", {}))


# Agent Zero's names for tools a0nb ships under its own: a model told about the upstream name (Agent Zero's prompts
# and skills say `code_execution_tool`) reaches a0nb's tool, unless a file of that name is in the hierarchy
UPSTREAM_NAMES: Mapping[str, str] = MappingProxyType({"code_execution_tool": "code_execution"})


class Tools:
    """Tool lookup: registered tools, then `tools/<name>.py` through the hierarchy (first that imports wins)."""

    def __init__(self, hierarchy: Hierarchy, loader: ModuleLoader, diagnostics: Diagnostics) -> None:
        self.hierarchy = hierarchy
        self.loader = loader
        loader.use_roots(lambda: hierarchy.roots)
        self.diagnostics = diagnostics
        self.registered: dict[str, ToolInfo] = {}
        # tried before everything else (MCP tools first, as Agent Zero's lookup does)
        self.lookups: list[Callable[[str], ToolInfo | None]] = []

    def register(self, obj: Any, name: str | None = None) -> ToolInfo:
        info = self._info_for(obj, name, None, REGISTERED)
        if info is None:
            raise A0Error(f"{obj!r} is not a Tool subclass, a ToolPlugin or a function")
        self.registered[info.name] = info
        return info

    def resolve(self, name: str) -> ToolInfo | None:
        for lookup in self.lookups:
            found = lookup(name)
            if found is not None:
                return found
        if name in self.registered:
            return self.registered[name]
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", name or ""):
            return None
        found = self.hierarchy.memo(("tool", name), lambda: self._resolve_file(name))
        if found is None and name in UPSTREAM_NAMES:  # (no file of Agent Zero's name in the hierarchy)
            own = self.resolve(UPSTREAM_NAMES[name])
            return replace(own, name=name) if own is not None else None
        return found if found is not None else self._by_schema_name(name)

    def _by_schema_name(self, name: str) -> ToolInfo | None:
        """A function a tool plugin declares (`add` in tools/calculator.py) is a tool of that name."""
        for info in [*self.registered.values(), *self.hierarchy.memo(("tools-available",), self._available_files).values()]:
            names = getattr(info.factory, "names", ()) if info.kind == "plugin" else ()
            if name in names:
                schema = next(s for s in info.factory.schemas if s.get("function", s).get("name") == name)
                desc, params = plugin_schema([schema])
                return replace(info, name=name, description=desc or info.description, schema=params)
        return None

    def claim(self, name: str, payload: Any) -> ToolInfo | None:
        """A name nothing resolves: the first tool plugin whose `can_handle_tool_call` says True runs the call."""
        for info in [*self.registered.values(), *self.hierarchy.memo(("tools-available",), self._available_files).values()]:
            if info.kind != "plugin":
                continue
            try:
                if info.factory.claims(name, payload):
                    return replace(info, name=name, factory=replace(info.factory, claimed=name))
            except A0Error as exc:
                self.diagnostics.add("error", "tool", str(exc), info.path, fix="see help(a0nb.ext.ToolPlugin)")
        return None

    def _resolve_file(self, name: str) -> ToolInfo | None:
        copies = self.hierarchy.files("tools", f"{name}.py")
        for i, (root, path) in enumerate(copies):
            module = self.loader.load(path, module_name_for(root.path, path), "tool")
            if module is None:
                continue  # import errors fall through to the next copy (reported in diagnostics)
            info = self._info_from_module(module, name, path, root.label, tuple(p for _, p in copies[i + 1:]))
            if info is not None:
                return info
            self.diagnostics.add("error", "tool", "defines no Tool subclass, ToolPlugin class or function "
                                 f"named {name!r}", path, fix=f"define `class MyTool(Tool)` or `def {name}(...)`")
        return self._resolve_process(name)

    def _resolve_process(self, name: str) -> ToolInfo | None:
        """`tools/<name>.sh` (bash) or `.js`/`.mjs` (node): the first copy that declares itself and whose runner
        is installed (a missing node or a bad header is a diagnostic)."""
        from a0nb.engine.process_tool import RUNNERS, HeaderError, read_spec, runner_available
        copies = [c for ext in RUNNERS for c in self.hierarchy.files("tools", f"{name}{ext}")]
        for i, (root, path) in enumerate(copies):
            runner = RUNNERS[path.suffix]
            if not runner_available(runner):
                self.diagnostics.add("warning", "tool", f"skipped: `{runner}` is not on PATH", path,
                                     fix=f"install {runner} to use this tool")
                continue
            try:
                spec = read_spec(path)
            except (HeaderError, OSError, UnicodeDecodeError) as exc:
                self.diagnostics.add("error", "tool", f"not loaded: {exc}", path, getattr(exc, "line", None),
                                     fix="start the file with comment lines `description: ...` and `arg NAME: TYPE`")
                continue
            return ToolInfo(name, "process", spec, path, root.label, tuple(p for _, p in copies[i + 1:]),
                            spec.description, spec.schema)
        return None

    def _info_from_module(self, module: Any, name: str, path: Path, label: str,
                          overrode: tuple[Path, ...]) -> ToolInfo | None:
        members = [m for m in vars(module).values() if isinstance(m, type) and getattr(m, "__module__", "") == module.__name__]
        tool_classes = sorted((m for m in members if issubclass(m, Tool) and m not in (Tool, FunctionTool)),
                              key=lambda c: c.__name__)
        if tool_classes:
            return self._info_for(tool_classes[-1], name, path, label, overrode)
        from a0nb.engine.tool_plugin import is_tool_plugin
        plugins = [m for m in members if is_tool_plugin(m)]
        if plugins:
            try:
                return self._info_for(plugins[-1], name, path, label, overrode)
            except A0Error as exc:  # a broken contract (or init/get_tool_schemas raising) is reported, not raised
                self.diagnostics.add("error", "tool", str(exc), path, fix="see help(a0nb.ext.ToolPlugin)")
                return None
        fn = getattr(module, name, None)
        if callable(fn):
            return self._info_for(fn, name, path, label, overrode)
        return None

    def _info_for(self, obj: Any, name: str | None, path: Path | None, label: str,
                  overrode: tuple[Path, ...] = ()) -> ToolInfo | None:
        if isinstance(obj, type) and issubclass(obj, Tool):
            tool_name = name or _snake(obj.__name__)
            return ToolInfo(tool_name, "class", obj, path, label, overrode,
                            obj.description or _own_doc(obj).split("\n\n")[0], dict(obj.parameters))
        from a0nb.engine.tool_plugin import LoadedTool, is_tool_plugin
        if is_tool_plugin(obj):
            loaded = LoadedTool.create(obj, path)
            desc, schema = plugin_schema(loaded.schemas)
            return ToolInfo(name or _snake(obj.__name__), "plugin", loaded, path, label, overrode, desc, schema)
        if callable(obj) and not isinstance(obj, type):
            desc, schema = function_schema(obj)
            return ToolInfo(name or obj.__name__, "function", obj, path, label, overrode, desc, schema)
        return None

    def _available_files(self) -> dict[str, ToolInfo]:
        names: list[str] = []
        for _root, folder in self.hierarchy.dirs("tools"):
            for p in sorted(folder.iterdir()):
                if p.suffix in (".py", ".sh", ".js", ".mjs") and not p.name.startswith("_") \
                        and p.stem not in names and p.stem != "unknown" and p.is_file():
                    names.append(p.stem)
        out = {}
        for n in names:
            info = self._resolve_file_cached(n)
            if info is not None:
                out[n] = info
        return out

    def available(self) -> dict[str, ToolInfo]:
        """Every tool name in the hierarchy (winner per name) plus registered ones."""
        found = dict(self.hierarchy.memo(("tools-available",), self._available_files))
        found.update(self.registered)
        return dict(sorted(found.items()))

    def _resolve_file_cached(self, name: str) -> ToolInfo | None:
        return self.hierarchy.memo(("tool", name), lambda: self._resolve_file(name))


def _own_doc(cls: type) -> str:
    """The class's own docstring (a base class's, e.g. Tool's, describes no tool)."""
    doc = cls.__dict__.get("__doc__")
    return inspect.cleandoc(doc) if isinstance(doc, str) else ""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
