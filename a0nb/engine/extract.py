"""From a model reply to a ToolRequest: find the first JSON object, parse it tolerantly, validate it.
Every failure is a Misformat whose message tells the model what was wrong and what to send."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from a0nb.engine.dirty_json import DirtyJson, try_parse
from a0nb.errors import Misformat

__all__ = ["ToolRequest", "first_closed_object", "parse_tool_request", "request_from_value", "tool_request_from_native"]

_SHAPE = (
    '{"thoughts": ["..."], "headline": "...", "tool_name": "name_of_tool", '
    '"tool_args": {"arg_name": "value"}}'
)
_SEND = f"Reply with exactly one JSON object and nothing else, shaped like: {_SHAPE}"
_XML_CALL = re.compile(
    r"<\s*/?\s*(?:tool_calls?|function_calls?|function|invoke|tool_use|parameter)\b", re.I
)
_ARRAY_START = re.compile(r"\s*(?:```[\w-]*\s*)?\[")
_DECODER = json.JSONDecoder(strict=False)  # stateless; strict=False lets raw control characters through
_new, _set = object.__new__, object.__setattr__


@dataclass(frozen=True)
class ToolRequest:
    """One tool call the model asked for; `raw` is the exact JSON text it came from."""

    tool_name: str
    method: str | None
    tool_args: dict[str, Any]
    thoughts: tuple[str, ...] = ()
    headline: str = ""
    raw: str = field(default="", repr=False)

    @property
    def full_name(self) -> str:
        return f"{self.tool_name}:{self.method}" if self.method else self.tool_name


def first_closed_object(text: str) -> str | None:
    """The first explicitly closed top-level {...} in text; None if unclosed or a '[' comes first."""
    start = text.find("{")
    if start < 0 or text.find("[", 0, start) >= 0:
        return None
    parser = DirtyJson()
    parser.feed(text[start:])
    if not parser.completed or parser.end is None:
        return None
    return text[start:start + parser.end]


def parse_tool_request(text: str) -> ToolRequest | Misformat:
    """The tool request in a model reply, or a Misformat saying how to fix the reply. Never raises."""
    if not isinstance(text, str) or not text.strip():
        return Misformat(f"Your reply was empty. {_SEND}", raw=text if isinstance(text, str) else "")
    start = text.find("{")
    if _ARRAY_START.match(text) is not None and _is_array_reply(text, start):
        return Misformat(
            f"Your reply is a JSON array; send a single JSON object, not a list of them. {_SEND}", raw=text
        )
    if start < 0:
        result: ToolRequest | Misformat = Misformat(f"Your reply contained no JSON object. {_SEND}", raw=text)
    else:
        result = _object_at(text, start)
    if isinstance(result, Misformat) and _XML_CALL.search(text):
        return Misformat(
            "Your reply used an XML-style tool call (<tool_call>, <invoke>, <function...>), which is not "
            f"read here. Do not use XML tags; reply with one JSON object instead, shaped like: {_SHAPE}",
            raw=text,
        )
    return result


def request_from_value(value: Any, raw: str) -> ToolRequest | Misformat:
    """What `parse_tool_request(raw)` gives a ToolRequest from, when `raw` is one strict JSON object that decodes
    to `value` (the stream watch decoded it already): the same request, without decoding it again."""
    return _validate(value, raw, raw)


def tool_request_from_native(tool_calls: list[dict[str, Any]]) -> ToolRequest | Misformat:
    """The first of OpenAI-shaped `tool_calls` as a ToolRequest (other calls are ignored)."""
    if not isinstance(tool_calls, (list, tuple)) or not tool_calls:
        return Misformat(f"Your reply held no tool call. {_SEND}", raw="")
    call = tool_calls[0]
    function = _field(call, "function")
    if function is None:
        function = call
    raw = _dump(call)
    arguments = _field(function, "arguments")
    if isinstance(arguments, str) and arguments.strip():
        parsed = try_parse(arguments)
        arguments = arguments if parsed is None and arguments.strip() != "null" else parsed
    elif isinstance(arguments, str):
        arguments = None
    value = {"tool_name": _field(function, "name"), "tool_args": arguments}
    return _validate(value, raw, raw)


def _is_array_reply(text: str, brace: int) -> bool:
    """True when the reply opens with a JSON array that holds (or precedes all) objects."""
    opening = _ARRAY_START.match(text)
    if opening is None:
        return False
    if brace < 0:
        return True
    at = opening.end() - 1
    parser = DirtyJson()
    parser.feed(text[at:])
    # "[note] {...}" is prose before the object; "[{...}]" is an array of calls.
    return not parser.completed or parser.end is None or at + parser.end > brace


def _object_at(text: str, start: int) -> ToolRequest | Misformat:
    try:
        value, end = _DECODER.raw_decode(text, start)  # fast path: valid JSON, C speed
        raw = text[start:end]
    except (ValueError, RecursionError):
        parser = DirtyJson()
        value = parser.feed(text[start:])
        if parser.too_deep:
            return Misformat(
                f"Your JSON object is nested more than {parser.max_depth} levels deep. "
                f"Send a flat object. {_SEND}",
                raw=text,
            )
        closed = parser.completed and parser.end is not None
        raw = text[start:start + parser.end] if closed else text[start:].rstrip()  # type: ignore[operator]
    return _validate(value, raw, text)


def _validate(value: Any, raw: str, text: str) -> ToolRequest | Misformat:
    if not isinstance(value, dict):
        return Misformat(f"Your reply held {_kind(value)} where a JSON object was expected. {_SEND}", raw=text)
    name = value.get("tool_name")
    if name is None:
        name = value.get("tool")
    if name is None:
        return Misformat(
            'Your JSON object has no "tool_name" key, so no tool can be called. Add "tool_name" with the '
            f'name of a tool (for a final answer, use the "response" tool). {_SEND}',
            raw=text,
        )
    if not isinstance(name, str):
        return Misformat(
            f'"tool_name" must be a string naming a tool, but it was {_kind(name)}. {_SEND}', raw=text
        )
    base, _, method = name.strip().partition(":")
    if not base.strip():
        return Misformat(
            '"tool_name" was empty. Put the name of a tool in it, e.g. "response" or '
            f'"skills_tool:load". {_SEND}',
            raw=text,
        )
    args = value.get("tool_args")
    if args is None:
        args = value.get("args")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return Misformat(
            f'"tool_args" must be a JSON object mapping argument names to values, but it was '
            f'{_kind(args)}. Use {{}} for a tool without arguments. {_SEND}',
            raw=text,
        )
    # (what the frozen dataclass's __init__ does, in one store instead of one object.__setattr__ per field)
    request = _new(ToolRequest)
    _set(request, "__dict__", {
        "tool_name": base.strip(),
        "method": method.strip() or None,
        "tool_args": args,
        "thoughts": _thoughts(value.get("thoughts")),
        "headline": headline if (headline := value.get("headline")).__class__ is str else _text(headline),
        "raw": raw,
    })
    return request


def _thoughts(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list):  # (strings, the usual case, as they are)
        return tuple([item if item.__class__ is str else _text(item) for item in value if item is not None])
    return (_text(value),)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else _dump(value)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _field(obj: Any, name: str) -> Any:
    """Read a field from a dict or from an SDK object (litellm returns either)."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)
