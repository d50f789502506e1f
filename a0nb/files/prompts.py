"""The prompt engine: finds prompt files through the hierarchy and renders `{{if}}`, placeholders and
includes with provenance, `VariablesPlugin` loaders and stat-keyed caches (reference §4, ARCHITECTURE §9)."""
from __future__ import annotations

import ast
import fnmatch
import importlib.util
import itertools
import json
import operator
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Callable, Iterable, Literal, Sequence, Union

from a0nb.files.imports import plain_redirector
from a0nb.diagnostics import Diagnostics
from a0nb.errors import PromptError

__all__ = ["VariablesPlugin", "PromptDir", "Source", "Rendered", "PromptEngine", "prompt_dirs"]

# A file or folder changed less than this long before we read it may change again within the same
# timestamp tick (coarse file-system clocks), so such reads are not trusted as cache entries.
_RACY_NS = 2_000_000_000
_MAX_BITS = 100_000  # bound on integers and sequences built inside `{{if}}` expressions
_MAX_NESTING = 100  # `{{if}}` blocks render recursively; deeper nesting would end in a RecursionError
_TEXT_CACHE = 64


class VariablesPlugin:
    """Subclass in `name.py` beside `name.md` to supply that prompt's variables (explicit kwargs win)."""

    def get_variables(self, file: str, backup_dirs: list[str] | None = None, **kwargs: Any) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class PromptDir:
    """One prompts folder of the hierarchy."""

    path: Path
    label: str


@dataclass(frozen=True)
class Source:
    """A file a render read, where it came from, and the lower copies it beat."""

    name: str
    path: Path
    label: str
    via: Literal["direct", "include", "original", "variables"]
    overrode: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Rendered:
    text: str
    sources: tuple[Source, ...]
    unknown: tuple[str, ...]

    def __str__(self) -> str:
        return self.text


def prompt_dirs(roots: Iterable[Any]) -> list[PromptDir]:
    """`PromptDir`s for `paths.Root`s (their `prompts/` sub-folders), existing or not, in order."""
    return [PromptDir(Path(r.path) / "prompts", r.label) for r in roots]


# ---- template structure -------------------------------------------------------------------------

@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Var:
    name: str
    raw: str
    line: int


@dataclass(frozen=True)
class _If:
    expr: str
    code: ast.Expression | None
    error: str
    open: str
    close: str
    body: tuple[_Node, ...]
    line: int


@dataclass(frozen=True)
class _Include:
    target: str | None  # None: `{{include original}}`
    raw: str
    line: int


@dataclass(frozen=True)
class _Halt:
    """An unterminated `{{if`: conditionals from here on are left as written."""

    line: int


_Node = Union[_Text, _Var, _If, _Include, _Halt]

_TOKEN = re.compile(
    r"\{\{(?:"
    r"\s*(?P<endif>endif)\s*"
    r"|\s*if\s+(?P<expr>[^\n]*?)\s*"
    r"|\s*include\s+(?:(?P<orig>original)|(?P<q>[\"'])(?P<target>[^\n]*?)(?P=q))\s*"
    r"|(?P<var>[A-Za-z_][\w.\-]*)"
    r")\}\}"
)
_VAR = re.compile(r"\{\{([A-Za-z_][\w.\-]*)\}\}")
_FENCE = re.compile(r"\A\s*(?P<f>`{3,}|~{3,})json[ \t]*\n(?P<body>.*?)\n?[ \t]*(?P=f)\s*\Z", re.S)


@dataclass(frozen=True)
class _Template:
    nodes: tuple[_Node, ...]
    notes: tuple[tuple[str, int | None], ...]  # warnings re-reported on every use (caches outlive clears)
    json_body: tuple[_Node, ...] | None  # the file is one fenced ```json block: its body's structure


def _fence_body(text: str) -> tuple[str, int] | None:
    """(body, first line of body) when `text` is exactly one fenced json block."""
    m = _FENCE.match(text)
    if m is None:
        return None
    fence, body = m["f"], m["body"]
    if re.search(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}", body, re.M):
        return None  # a second fence inside: more than one block
    return body, 1 + text.count("\n", 0, m.start("body"))


def _compile(expr: str) -> tuple[ast.Expression | None, str]:
    try:
        return ast.parse(expr.strip(), mode="eval"), ""
    except Exception as exc:  # SyntaxError, ValueError (NUL), RecursionError (deep nesting)
        return None, f"{type(exc).__name__}: {exc}"


class _TooDeep(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _parse(text: str, line: int = 1) -> tuple[tuple[_Node, ...], list[tuple[str, int | None]]]:
    root: list[_Node] = []
    cur = root
    stack: list[tuple[re.Match[str], list[_Node], int]] = []
    notes: list[tuple[str, int | None]] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() > pos:
            cur.append(_Text(text[pos:m.start()]))
        line += text.count("\n", pos, m.start())
        pos = m.end()
        raw = m.group(0)
        if m["var"] is not None:
            cur.append(_Var(m["var"], raw, line))
        elif m["expr"] is not None:
            if len(stack) >= _MAX_NESTING:
                raise _TooDeep(line)
            stack.append((m, cur, line))
            cur = []
        elif m["endif"] is not None:
            if stack:
                om, parent, oline = stack.pop()
                code, error = _compile(om["expr"])
                parent.append(_If(om["expr"], code, error, om.group(0), raw, tuple(cur), oline))
                cur = parent
            else:
                notes.append(("stray {{endif}} without an {{if}}; kept as text", line))
                cur.append(_Text(raw))
        else:
            cur.append(_Include(None if m["orig"] else m["target"], raw, line))
        line += raw.count("\n")
    if pos < len(text):
        cur.append(_Text(text[pos:]))
    while stack:  # unterminated: flatten back into the text, halting conditionals at the outermost
        om, parent, oline = stack.pop()
        parent.extend([_Halt(oline)] if not stack else [])
        parent.extend([_Text(om.group(0)), *cur])
        cur = parent
    return tuple(root), notes


def _template(data: bytes, label: str) -> _Template:
    notes: list[tuple[str, int | None]] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        notes.append((f"{label} is not valid UTF-8 ({exc.reason} at byte {exc.start}); bad bytes shown as U+FFFD", None))
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    try:
        nodes, parse_notes = _parse(text)
        fenced = _fence_body(text)
        body = _parse(*fenced)[0] if fenced else None
    except _TooDeep as exc:
        raise PromptError(f"{label}:{exc.line}: {{{{if}}}} blocks nested more than {_MAX_NESTING} levels deep; "
                          "flatten them (combine conditions with and/or)") from None
    return _Template(nodes, tuple(notes + parse_notes), body)


# ---- the safe `{{if}}` evaluator ----------------------------------------------------------------

class _EvalError(Exception):
    pass


_ARITH: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


def _truth(code: ast.Expression, names: dict[str, Any]) -> bool:
    try:
        return bool(_ev(code.body, names))
    except _EvalError:
        raise
    except Exception as exc:  # TypeError, ZeroDivisionError, a value whose __bool__ raises, ...
        raise _EvalError(f"{type(exc).__name__}: {exc}") from None


def _ev(node: ast.AST, names: dict[str, Any]) -> Any:
    t = type(node)
    if t is ast.Constant:
        value = node.value  # type: ignore[attr-defined]
        if value is None or isinstance(value, (str, int, float)):
            return value
        raise _EvalError(f"literal {value!r} is not allowed")
    if t is ast.Name:
        if node.id in names:  # type: ignore[attr-defined]
            return names[node.id]  # type: ignore[attr-defined]
        raise _EvalError(f"undefined name {node.id!r}")  # type: ignore[attr-defined]
    if t is ast.BoolOp:
        want_true = isinstance(node.op, ast.Or)  # type: ignore[attr-defined]
        result: Any = None
        for value_node in node.values:  # type: ignore[attr-defined]
            result = _ev(value_node, names)
            if bool(result) == want_true:
                break
        return result
    if t is ast.UnaryOp:
        return _unary(node, _ev(node.operand, names))  # type: ignore[attr-defined]
    if t is ast.BinOp:
        return _binop(node.op, _ev(node.left, names), _ev(node.right, names))  # type: ignore[attr-defined]
    if t is ast.Compare:
        left = _ev(node.left, names)  # type: ignore[attr-defined]
        for op, right_node in zip(node.ops, node.comparators):  # type: ignore[attr-defined]
            right = _ev(right_node, names)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if t is ast.Subscript:
        return _subscript(node, names)  # type: ignore[arg-type]
    if t is ast.Call:
        return _call(node, names)  # type: ignore[arg-type]
    if t in (ast.List, ast.Tuple):
        items = [_bad(e) if type(e) is ast.Starred else _ev(e, names) for e in node.elts]  # type: ignore[attr-defined]
        return items if t is ast.List else tuple(items)
    if t is ast.Dict:
        if any(k is None for k in node.keys):  # type: ignore[attr-defined]
            raise _EvalError("** in a dict literal is not allowed")
        return {_ev(k, names): _ev(v, names) for k, v in zip(node.keys, node.values)}  # type: ignore[attr-defined]
    return _bad(node)


def _bad(node: ast.AST) -> Any:
    raise _EvalError(f"{type(node).__name__} is not allowed in {{{{if}}}} (names, literals, and/or/not, "
                     "comparisons, arithmetic, subscripts and len() are)")


def _unary(node: ast.UnaryOp, value: Any) -> Any:
    if isinstance(node.op, ast.Not):
        return not value
    if isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(value, (int, float)):
        return -value if isinstance(node.op, ast.USub) else +value
    raise _EvalError(f"{type(node.op).__name__} of {type(value).__name__} is not allowed")


def _binop(op: ast.operator, a: Any, b: Any) -> Any:
    fn = _ARITH.get(type(op))
    if fn is None:
        return _bad(op)
    numbers = isinstance(a, (int, float)) and isinstance(b, (int, float))
    if isinstance(op, (ast.Mod, ast.Pow)) and not numbers:
        raise _EvalError(f"{type(op).__name__} needs numbers")  # `%` on strings is formatting
    if isinstance(op, ast.Pow) and isinstance(a, int) and isinstance(b, int) and abs(b) > 1:
        if max(a.bit_length(), 1) * abs(b) > _MAX_BITS:
            raise _EvalError("power too large")
    if isinstance(op, ast.Mult) and not numbers:
        seq, n = (a, b) if isinstance(b, int) else (b, a)
        if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > _MAX_BITS:
            raise _EvalError("repetition too large")
    return fn(a, b)


def _subscript(node: ast.Subscript, names: dict[str, Any]) -> Any:
    container = _ev(node.value, names)
    if isinstance(node.slice, ast.Slice):
        raise _EvalError("slices are not allowed")
    if not isinstance(container, (dict, list, tuple, str)):
        raise _EvalError(f"cannot subscript {type(container).__name__}")
    return container[_ev(node.slice, names)]


def _call(node: ast.Call, names: dict[str, Any]) -> Any:
    if (isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1
            and not node.keywords and not isinstance(node.args[0], ast.Starred)):
        return len(_ev(node.args[0], names))
    raise _EvalError("only len(x) may be called")


# ---- values ------------------------------------------------------------------------------------

def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        try:
            return json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):  # non-string keys, cycles
            return str(value)
    return str(value)


def _valid_name(name: str) -> bool:
    if not name or "\x00" in name or os.path.isabs(name) or PureWindowsPath(name).anchor:
        return False
    return ".." not in PurePosixPath(name.replace("\\", "/")).parts


def _py_name(name: str) -> str:
    stem, ext = os.path.splitext(name)
    return (stem if ext else name) + ".py"


def _is_plugin(obj: Any) -> bool:
    if not isinstance(obj, type) or obj is VariablesPlugin:
        return False
    # a reloaded a0nb.files.prompts makes a new base class; files written against the old one still count
    return issubclass(obj, VariablesPlugin) or any(
        b.__name__ == "VariablesPlugin" and b.__module__.startswith("a0nb") for b in obj.__mro__[1:])


# ---- the engine ---------------------------------------------------------------------------------

@dataclass
class _Ctx:
    """One render call: its arguments, what it read, and per-call memo of folder listings."""

    agent: object
    kwargs: dict[str, Any]
    listings: dict[int, frozenset[str]] = field(default_factory=dict)
    sources: dict[tuple[Path, str], Source] = field(default_factory=dict)
    unknown: dict[str, None] = field(default_factory=dict)
    stack: list[tuple[str, Path | None]] = field(default_factory=list)


@dataclass
class _File:
    """One file being rendered: where it was found and its variables."""

    name: str
    path: Path | None
    index: int  # position in the hierarchy; -1 for render_text
    vars: dict[str, Any]
    json: bool = False
    halted: bool = False

    @property
    def where(self) -> str:
        return str(self.path) if self.path else "<text>"


_SCALARS = (str, int, float, bool, type(None))


def _render_key(name: str, kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    if all(isinstance(v, _SCALARS) for v in kwargs.values()):
        return (name, tuple(sorted(kwargs.items())))
    return None


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class PromptEngine:
    """Renders prompt files found in an ordered list of prompt folders, highest priority first."""

    def __init__(self, dirs: Sequence[PromptDir], diagnostics: Diagnostics | None = None) -> None:
        self.diagnostics = diagnostics if diagnostics is not None else Diagnostics()
        self._dirs: tuple[PromptDir, ...] = tuple(dirs)
        self._files: dict[Path, tuple[tuple[int, int] | None, _Template]] = {}
        self._listings: dict[Path, tuple[int | None, frozenset[str]]] = {}
        self._classes: dict[Path, tuple[tuple[int, int] | None, type | None, str]] = {}
        self._texts: dict[str, _Template] = {}
        self._module_ids = itertools.count()
        # An owner that watches the prompt folders itself (the agent's Hierarchy) sets this and calls
        # invalidate() on a change, so a warm render does not stat every folder again.
        self.trust_listings = False
        self._renders: dict[tuple[Any, ...], tuple[tuple[tuple[Path, tuple[int, int] | None], ...], Rendered]] = {}

    @property
    def dirs(self) -> tuple[PromptDir, ...]:
        return self._dirs

    def set_dirs(self, dirs: Sequence[PromptDir]) -> None:
        self._dirs = tuple(dirs)  # caches are keyed by path, so they stay valid
        self._renders.clear()  # which copy wins may differ now

    def invalidate(self) -> None:
        """Forget folder listings (the owner saw a change in the hierarchy)."""
        self._listings.clear()
        self._renders.clear()

    # -- lookup --

    def find(self, name: str) -> PromptDir | None:
        found = self.find_all(name)
        return found[0] if found else None

    def find_all(self, name: str) -> list[PromptDir]:
        if not _valid_name(name):
            return []
        ctx = _Ctx(None, {})
        return [d for i, d in enumerate(self._dirs) if self._has(ctx, i, name)]

    def names(self, glob: str) -> list[tuple[str, PromptDir]]:
        ctx = _Ctx(None, {})
        found: dict[str, PromptDir] = {}
        for i, d in enumerate(self._dirs):
            for name in fnmatch.filter(self._listing(ctx, i), glob):
                found.setdefault(name, d)
        return sorted(found.items())

    def _listing(self, ctx: _Ctx, index: int) -> frozenset[str]:
        got = ctx.listings.get(index)
        if got is None:
            got = ctx.listings[index] = self._scan(self._dirs[index].path)
        return got

    def _scan(self, folder: Path) -> frozenset[str]:
        if self.trust_listings:
            trusted = self._listings.get(folder)
            if trusted is not None and trusted[0] is not None:
                return trusted[1]
        try:
            mtime: int | None = os.stat(folder).st_mtime_ns
        except (OSError, ValueError):
            if self.trust_listings:  # a missing folder stays missing until the owner invalidates
                self._listings[folder] = (-1, frozenset())
            return frozenset()
        hit = self._listings.get(folder)
        if hit is not None and hit[0] == mtime:
            return hit[1]
        started = time.time_ns()
        try:
            with os.scandir(folder) as entries:
                names = frozenset(e.name for e in entries if e.is_file())
        except OSError:
            names = frozenset()
        self._listings[folder] = (mtime if started - mtime > _RACY_NS else None, names)  # type: ignore[operator]
        return names

    def _has(self, ctx: _Ctx, index: int, name: str) -> bool:
        if "/" not in name and "\\" not in name:
            return name in self._listing(ctx, index)
        try:
            return (self._dirs[index].path / name).is_file()
        except (OSError, ValueError):
            return False

    def _locate(self, ctx: _Ctx, name: str, start: int) -> int | None:
        return next((i for i in range(start, len(self._dirs)) if self._has(ctx, i, name)), None)

    def _lower(self, ctx: _Ctx, name: str, index: int) -> tuple[Path, ...]:
        return tuple(self._dirs[j].path / name for j in range(index + 1, len(self._dirs)) if self._has(ctx, j, name))

    # -- public rendering --

    def render(self, name: str, /, *, agent: object = None, **kwargs: Any) -> Rendered:
        """Render a prompt file (conditionals, placeholders, includes); a fenced-json file loses its fences."""
        key = _render_key(name, kwargs)
        if key is not None:
            hit = self._renders.get(key)
            if hit is not None and all(_stat_key(p) == k for p, k in hit[0]):
                return hit[1]
        ctx = _Ctx(agent, kwargs)
        text = self._top(ctx, name, as_json=False)
        stripped = _fence_body(text)
        rendered = self._result(ctx, stripped[0] if stripped else text)
        if key is not None:
            self._remember(key, rendered)
        return rendered

    def _remember(self, key: tuple[Any, ...], rendered: Rendered) -> None:
        """Cache a render whose output depends only on its files and kwargs (no variables loader), valid
        while every file it read keeps its (mtime, size); recently written files are never trusted."""
        if any(s.via == "variables" for s in rendered.sources):
            return
        now = time.time_ns()
        stamps = []
        for source in rendered.sources:
            k = _stat_key(source.path)
            if k is None or now - k[0] < _RACY_NS:
                return
            stamps.append((source.path, k))
        if len(self._renders) >= 512:
            self._renders.pop(next(iter(self._renders)))
        self._renders[key] = (tuple(stamps), rendered)

    def render_text(self, text: str, /, *, agent: object = None, **kwargs: Any) -> Rendered:
        """Render a string as if it were a file above every prompt folder (no variables loader)."""
        ctx = _Ctx(agent, kwargs)
        tpl = self._texts.get(text)
        if tpl is None:
            tpl = _template(text.encode("utf-8", "surrogatepass"), "<text>")
            if len(self._texts) >= _TEXT_CACHE:
                self._texts.pop(next(iter(self._texts)))
            self._texts[text] = tpl
        self._report_notes(tpl, "<text>")
        file = _File("<text>", None, -1, dict(kwargs))
        ctx.stack.append(("<text>", None))
        out: list[str] = []
        self._walk(ctx, file, tpl.nodes, out)
        rendered = "".join(out)
        stripped = _fence_body(rendered)
        return self._result(ctx, stripped[0] if stripped else rendered)

    def parse(self, name: str, /, *, agent: object = None, **kwargs: Any) -> Any:
        """A fenced-json template → `json.loads` of it with each value JSON-encoded; otherwise `render` text."""
        ctx = _Ctx(agent, kwargs)
        index = self._require(ctx, name)
        path = self._dirs[index].path / name
        try:
            is_json = self._load(path).json_body is not None
        except OSError as exc:
            raise PromptError(f"cannot read prompt file {path}: {exc}") from exc
        if not is_json:
            return self.render(name, agent=agent, **kwargs).text
        text = self._top(ctx, name, as_json=True)
        try:
            return json.loads(text)
        except ValueError as exc:
            raise PromptError(f"{path}: the JSON template is not valid JSON after substitution ({exc}):\n{text}") from exc

    def _result(self, ctx: _Ctx, text: str) -> Rendered:
        return Rendered(text, tuple(ctx.sources.values()), tuple(ctx.unknown))

    def _require(self, ctx: _Ctx, name: str) -> int:
        if not _valid_name(name):
            raise PromptError(f"invalid prompt name {name!r}: use a file name relative to the prompt folders")
        index = self._locate(ctx, name, 0)
        if index is None:
            searched = "\n".join(f"  {d.label}: {d.path}" for d in self._dirs) or "  (no prompt folders)"
            raise PromptError(f"prompt file {name!r} not found; searched:\n{searched}")
        return index

    def _top(self, ctx: _Ctx, name: str, as_json: bool) -> str:
        index = self._require(ctx, name)
        try:
            return self._render_file(ctx, name, index, "direct", as_json)
        except OSError as exc:
            raise PromptError(f"cannot read prompt file {self._dirs[index].path / name}: {exc}") from exc

    # -- rendering internals --

    def _render_file(self, ctx: _Ctx, name: str, index: int, via: str, as_json: bool = False) -> str:
        d = self._dirs[index]
        path = d.path / name
        if any(p == path for _, p in ctx.stack):
            self._cycle(ctx, name, path)
        tpl = self._load(path)
        ctx.sources.setdefault((path, via), Source(name, path, d.label, via, self._lower(ctx, name, index)))  # type: ignore[arg-type]
        self._report_notes(tpl, path)
        variables = self._plugin_vars(ctx, name, index, path)
        variables.update(ctx.kwargs)
        file = _File(name, path, index, variables, json=as_json)
        ctx.stack.append((name, path))
        try:
            out: list[str] = []
            self._walk(ctx, file, tpl.json_body if as_json and tpl.json_body is not None else tpl.nodes, out)
        finally:
            ctx.stack.pop()
        return "".join(out)

    def _cycle(self, ctx: _Ctx, name: str, path: Path) -> None:
        chain = [*ctx.stack, (name, path)]
        start = next(i for i, (_, p) in enumerate(chain) if p == path)
        chain = chain[start:]
        names = " → ".join(n for n, _ in chain)
        paths = "\n".join(f"  {n}: {p}" for n, p in chain)
        raise PromptError(f"include cycle: {names}\n{paths}\nfix: remove one of these includes")

    def _load(self, path: Path) -> _Template:
        st = os.stat(path)
        key = (st.st_mtime_ns, st.st_size)
        hit = self._files.get(path)
        if hit is not None and hit[0] == key:
            return hit[1]
        started = time.time_ns()
        tpl = _template(path.read_bytes(), str(path))
        self._files[path] = (key if started - key[0] > _RACY_NS else None, tpl)
        return tpl

    def _report_notes(self, tpl: _Template, where: object) -> None:
        for message, line in tpl.notes:
            self.diagnostics.add("warning", "prompt", message, where, line)

    def _walk(self, ctx: _Ctx, file: _File, nodes: tuple[_Node, ...], out: list[str]) -> None:
        for node in nodes:
            kind = type(node)
            if kind is _Text:
                out.append(node.text)  # type: ignore[union-attr]
            elif kind is _Var:
                out.append(self._value(ctx, file, node))  # type: ignore[arg-type]
            elif kind is _If:
                self._conditional(ctx, file, node, out)  # type: ignore[arg-type]
            elif kind is _Include:
                out.append(self._include(ctx, file, node))  # type: ignore[arg-type]
            else:
                file.halted = True
                self.diagnostics.add("warning", "prompt", "unterminated {{if}}: it and the rest of the file are "
                                     "left as written", file.where, node.line, "add the missing {{endif}}")  # type: ignore[union-attr]

    def _conditional(self, ctx: _Ctx, file: _File, node: _If, out: list[str]) -> None:
        if not file.halted:
            try:
                if node.code is None:
                    raise _EvalError(node.error)
                keep = _truth(node.code, file.vars)
            except _EvalError as exc:
                file.halted = True
                self.diagnostics.add(
                    "warning", "prompt", f"cannot evaluate {{{{if {node.expr}}}}}: {exc}; this block and the rest "
                    "of the file are left as written", file.where, node.line,
                    "pass every name the condition uses (None or '' for 'absent')")
            else:
                if keep:
                    self._walk(ctx, file, node.body, out)
                return
        out.append(node.open)
        self._walk(ctx, file, node.body, out)
        out.append(node.close)

    def _value(self, ctx: _Ctx, file: _File, node: _Var) -> str:
        try:
            value = file.vars[node.name]
        except KeyError:
            if file.json:
                raise PromptError(f"{file.where}:{node.line}: variable {node.name!r} is missing for the JSON "
                                  f"template; pass {node.name}=...") from None
            ctx.unknown.setdefault(node.name)
            self.diagnostics.add("info", "prompt", f"no variable named {node.name!r}; {node.raw} left as written",
                                 file.where, node.line)
            return node.raw
        if not file.json:
            return _as_text(value)
        try:
            return json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError) as exc:
            raise PromptError(f"{file.where}:{node.line}: variable {node.name!r} cannot be JSON-encoded: {exc}") from exc

    def _include(self, ctx: _Ctx, file: _File, node: _Include) -> str:
        if node.target is None:
            return self._original(ctx, file, node)
        target = node.target
        if "{{" in target:  # a placeholder inside the file name selects the file
            target = _VAR.sub(lambda m: _as_text(file.vars[m[1]]) if m[1] in file.vars else m[0], target)
        if not _valid_name(target):
            return self._keep(file, node, f"include of {target!r} refused: only names relative to the prompt "
                              "folders can be included")
        index = self._locate(ctx, target, 0)
        if index is None:
            return self._keep(file, node, f"included file {target!r} not found in any prompt folder")
        try:
            return self._render_file(ctx, target, index, "include")
        except OSError as exc:
            return self._keep(file, node, f"cannot read included file {target!r}: {exc}")

    def _original(self, ctx: _Ctx, file: _File, node: _Include) -> str:
        if file.path is None:
            return self._keep(file, node, "{{include original}} needs a file name; render_text has none")
        index = self._locate(ctx, file.name, file.index + 1)
        if index is None:
            return ""  # nothing lower to extend
        try:
            return self._render_file(ctx, file.name, index, "original")
        except OSError as exc:
            return self._keep(file, node, f"cannot read the original of {file.name!r}: {exc}")

    def _keep(self, file: _File, node: _Include, message: str) -> str:
        self.diagnostics.add("warning", "prompt", f"{message}; {node.raw} left as written", file.where, node.line)
        return node.raw

    # -- variables loaders --

    def _plugin_vars(self, ctx: _Ctx, name: str, index: int, md_path: Path) -> dict[str, Any]:
        py = _py_name(name)
        found = next((i for i in (index, *range(len(self._dirs))) if self._has(ctx, i, py)), None)
        if found is None:
            return {}
        d = self._dirs[found]
        path = d.path / py
        ctx.sources.setdefault((path, "variables"), Source(py, path, d.label, "variables", self._lower(ctx, py, found)))
        cls = self._plugin_class(path)
        if cls is None:
            return {}
        extra = {k: v for k, v in ctx.kwargs.items() if k not in ("file", "backup_dirs", "_agent")}
        try:
            got = cls().get_variables(str(md_path), [str(x.path) for x in self._dirs], _agent=ctx.agent, **extra)
            if not isinstance(got, dict):
                raise TypeError(f"get_variables returned {type(got).__name__}, not a dict")
        except (Exception, SystemExit) as exc:  # sys.exit() in a loader must not end the agent's event loop
            self.diagnostics.add("error", "prompt", f"{cls.__name__}.get_variables failed: {type(exc).__name__}: "
                                 f"{exc}; {name} rendered without its variables", path, fix="fix the loader")
            return {}
        return dict(got)

    def _plugin_class(self, path: Path) -> type | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (st.st_mtime_ns, st.st_size)
        hit = self._classes.get(path)
        if hit is None or hit[0] != key:
            started = time.time_ns()
            cls, error = self._import(path)
            hit = (key if started - key[0] > _RACY_NS else None, cls, error)
            self._classes[path] = hit
        if hit[2]:
            self.diagnostics.add("error", "prompt", hit[2], path, fix="fix the file; the prompt renders without it")
        return hit[1]

    def _import(self, path: Path) -> tuple[type | None, str]:
        module_name = f"_a0nb_prompt_vars_{id(self):x}_{next(self._module_ids)}"
        try:
            spec = importlib.util.spec_from_file_location(module_name, path)
            if spec is None or spec.loader is None:
                return None, "cannot be imported as a Python file"
            module = importlib.util.module_from_spec(spec)
            module.__dict__["__builtins__"] = plain_redirector().builtins()  # Agent Zero's `helpers.*` names
            sys.modules[module_name] = module  # dataclasses and typing look the module up while it runs
            try:
                spec.loader.exec_module(module)
            finally:
                sys.modules.pop(module_name, None)
        except (Exception, SystemExit) as exc:
            return None, f"variables loader failed to import: {type(exc).__name__}: {exc}"
        classes = [v for v in vars(module).values() if _is_plugin(v)]
        own = [c for c in classes if c.__module__ == module_name]
        if not (own or classes):
            return None, "defines no VariablesPlugin subclass"
        return (own or classes)[0], ""
