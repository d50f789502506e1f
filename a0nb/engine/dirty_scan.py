"""Token scanners for `dirty_json`: blanks and comments, strings and their escapes, bare numbers,
keywords and unquoted words. Pure functions over a buffer and an index."""
from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["match_run", "skip_blank", "escape_boundary", "is_escape", "decode", "read_bare", "scalar"]

_BLANK = re.compile(r"\s+")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[+-]?[A-Za-z]+")
_UNQUOTED = re.compile(r"[^,:}\]]*")
_ESCAPE = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(.))", re.S
)
_HIGH_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
_SIMPLE_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_WORDS: dict[str, Any] = {
    "true": True, "false": False, "null": None, "none": None, "undefined": None,
    "nan": float("nan"), "infinity": float("inf"), "+infinity": float("inf"), "-infinity": float("-inf"),
}


def match_run(pattern: re.Pattern[str], buf: str, i: int) -> re.Match[str]:
    """Match a pattern that matches anywhere (a `*` run, possibly empty): never None."""
    match = pattern.match(buf, i)
    assert match is not None
    return match


def skip_blank(buf: str, i: int) -> int:
    """Index of the next meaningful character; -1 if an unfinished comment runs to the end."""
    n = len(buf)
    while i < n:
        c = buf[i]
        if c.isspace():
            i = match_run(_BLANK, buf, i).end()
        elif c != "/":
            return i
        elif i + 1 >= n:
            return -1
        elif buf[i + 1] == "/":
            j = buf.find("\n", i + 2)
            if j < 0:
                return -1
            i = j + 1
        elif buf[i + 1] == "*":
            j = buf.find("*/", i + 2)
            if j < 0:
                return -1
            i = j + 2
        else:
            return i
    return i


def escape_boundary(buf: str, start: int, end: int) -> int:
    """Where an open string may be cut for decoding: never inside \\uXXXX or a surrogate pair."""
    at = buf.rfind("\\", max(start, end - 12), end)
    if at < 0 or not is_escape(buf, start, at):
        return end  # at most the second half of an escaped backslash: nothing is open
    before = at - 6
    if before >= start and _HIGH_SURROGATE.fullmatch(buf, before, at) and is_escape(buf, start, before):
        return before  # keep a surrogate pair together
    return at


def is_escape(buf: str, start: int, at: int) -> bool:
    """True if the backslash at `at` starts an escape; `start` is known to be outside one."""
    run = at
    while run > start and buf[run - 1] == "\\":
        run -= 1
    return (at - run) % 2 == 0


def decode(body: str, quote: str) -> str:
    if "\\" not in body:
        return body
    if quote == '"':
        try:
            return json.loads(f'"{body}"', strict=False)  # type: ignore[no-any-return]
        except ValueError:
            pass  # an escape JSON rejects: decode by hand below
    return _ESCAPE.sub(_unescape, body)


def _unescape(match: re.Match[str]) -> str:
    high, low, code, char = match.groups()
    if high:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00)
    if code:
        return chr(int(code, 16))
    if char == "u":
        return "\\u"  # not four hex digits: keep it as written
    return _SIMPLE_ESCAPES.get(char, char)


def read_bare(buf: str, i: int) -> tuple[Any, int] | None:
    """A number, keyword or unquoted string at i, or None if it may continue past the end."""
    n = len(buf)
    for pattern in (_NUMBER, _WORD):
        match = pattern.match(buf, i)
        if match is None:
            continue
        end = match.end()
        if end >= n:
            return None
        if buf[end].isspace() or buf[end] in ",:}]/":
            value = scalar(match.group())
            if pattern is _NUMBER or not isinstance(value, str):
                return value, end
    match = match_run(_UNQUOTED, buf, i)
    end = match.end()
    return None if end >= n else (scalar(match.group()), end)


def scalar(text: str) -> Any:
    text = text.strip()
    word = text.lower()
    if word in _WORDS:
        return _WORDS[word]
    if not _NUMBER.fullmatch(text):
        return text
    text = text.lstrip("+")
    try:
        return float(text) if any(ch in text for ch in ".eE") else int(text)
    except ValueError:  # more digits than int() will convert
        return float(text)
