"""Prompt template parser: turns a prompt file's bytes into a tree of text, `{{name}}` placeholders,
`{{if}}` blocks and `{{include}}`s, with the warnings to re-report on each use (reference §4)."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Union

from a0nb.errors import PromptError

__all__ = ["Text", "Var", "If", "Include", "Halt", "Node", "Template", "VAR", "fence_body", "load_template"]

MAX_NESTING = 100  # `{{if}}` blocks render recursively; deeper nesting would end in a RecursionError


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Var:
    name: str
    raw: str
    line: int


@dataclass(frozen=True)
class If:
    expr: str
    code: ast.Expression | None
    error: str
    open: str
    close: str
    body: tuple[Node, ...]
    line: int


@dataclass(frozen=True)
class Include:
    target: str | None  # None: `{{include original}}`
    raw: str
    line: int


@dataclass(frozen=True)
class Halt:
    """An unterminated `{{if`: conditionals from here on are left as written."""

    line: int


Node = Union[Text, Var, If, Include, Halt]

_TOKEN = re.compile(
    r"\{\{(?:"
    r"\s*(?P<endif>endif)\s*"
    r"|\s*if\s+(?P<expr>[^\n]*?)\s*"
    r"|\s*include\s+(?:(?P<orig>original)|(?P<q>[\"'])(?P<target>[^\n]*?)(?P=q))\s*"
    r"|(?P<var>[A-Za-z_][\w.\-]*)"
    r")\}\}"
)
VAR = re.compile(r"\{\{([A-Za-z_][\w.\-]*)\}\}")
_FENCE = re.compile(r"\A\s*(?P<f>`{3,}|~{3,})json[ \t]*\n(?P<body>.*?)\n?[ \t]*(?P=f)\s*\Z", re.S)


@dataclass(frozen=True)
class Template:
    nodes: tuple[Node, ...]
    notes: tuple[tuple[str, int | None], ...]  # warnings re-reported on every use (caches outlive clears)
    json_body: tuple[Node, ...] | None  # the file is one fenced ```json block: its body's structure


def fence_body(text: str) -> tuple[str, int] | None:
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


def _parse(text: str, line: int = 1) -> tuple[tuple[Node, ...], list[tuple[str, int | None]]]:
    root: list[Node] = []
    cur = root
    stack: list[tuple[re.Match[str], list[Node], int]] = []
    notes: list[tuple[str, int | None]] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() > pos:
            cur.append(Text(text[pos:m.start()]))
        line += text.count("\n", pos, m.start())
        pos = m.end()
        raw = m.group(0)
        if m["var"] is not None:
            cur.append(Var(m["var"], raw, line))
        elif m["expr"] is not None:
            if len(stack) >= MAX_NESTING:
                raise _TooDeep(line)
            stack.append((m, cur, line))
            cur = []
        elif m["endif"] is not None:
            if stack:
                om, parent, oline = stack.pop()
                code, error = _compile(om["expr"])
                parent.append(If(om["expr"], code, error, om.group(0), raw, tuple(cur), oline))
                cur = parent
            else:
                notes.append(("stray {{endif}} without an {{if}}; kept as text", line))
                cur.append(Text(raw))
        else:
            cur.append(Include(None if m["orig"] else m["target"], raw, line))
        line += raw.count("\n")
    if pos < len(text):
        cur.append(Text(text[pos:]))
    while stack:  # unterminated: flatten back into the text, halting conditionals at the outermost
        om, parent, oline = stack.pop()
        parent.extend([Halt(oline)] if not stack else [])
        parent.extend([Text(om.group(0)), *cur])
        cur = parent
    return tuple(root), notes


def load_template(data: bytes, label: str) -> Template:
    """Parse a prompt file's bytes (BOM and CRLF tolerated); `label` names the file in warnings and errors."""
    notes: list[tuple[str, int | None]] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        notes.append((f"{label} is not valid UTF-8 ({exc.reason} at byte {exc.start}); bad bytes shown as U+FFFD", None))
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    try:
        nodes, parse_notes = _parse(text)
        fenced = fence_body(text)
        body = _parse(*fenced)[0] if fenced else None
    except _TooDeep as exc:
        raise PromptError(f"{label}:{exc.line}: {{{{if}}}} blocks nested more than {MAX_NESTING} levels deep; "
                          "flatten them (combine conditions with and/or)") from None
    return Template(nodes, tuple(notes + parse_notes), body)

