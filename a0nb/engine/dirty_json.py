"""A tolerant, incremental JSON parser for model output, written without eval or recursion.
Owns DirtyJson (feed text, read the partial value), parse_dirty and try_parse."""
from __future__ import annotations

import json
import re
from typing import Any

from a0nb.engine.dirty_scan import decode, escape_boundary, match_run, read_bare, scalar, skip_blank

__all__ = ["DirtyJson", "parse_dirty", "try_parse", "MAX_DEPTH"]

# Deeper values are refused: callers json.dumps or compare them, and those recurse in C.
MAX_DEPTH = 256
TAIL_LIMIT = 4096  # blanks after a doubled root's first `}` still watched for its second

_KEY, _COLON, _VALUE, _COMMA = range(4)
_QUOTES = "\"'`"
_ROOT_START = re.compile(r'[{\["]')
_UNQUOTED_KEY = re.compile(r"[^,:{}\[\]]*")
# Fast paths; the lookahead insists on a following delimiter so a token cut by a chunk never matches.
_PLAIN_KEY = re.compile(r'"(?!"")([^"\\]*)"\s*:')
_PLAIN_VALUE = re.compile(
    r'(?:(-?(?:0|[1-9][0-9]{0,17}))|"(?!"")([^"\\]*)"|\'(?!\'\')([^\'\\]*)\')\s*(?=[,}\]])(,\s*)?'
)
_RUNS = {q: re.compile(rf"[^{q}\\]*(?:\\.[^{q}\\]*)*", re.S) for q in _QUOTES}


class _Frame:
    """One open container: the object being filled and what the parser expects next in it."""

    __slots__ = ("box", "is_dict", "state", "key")

    def __init__(self, box: dict[str, Any] | list[Any]) -> None:
        self.box: Any = box  # a dict when `is_dict` (checked once here, not on every item)
        self.is_dict = isinstance(box, dict)
        self.state = _KEY if self.is_dict else _VALUE
        self.key = ""


class DirtyJson:
    """Feed text as it arrives; `feed` returns the value so far (partial tokens included).

    `completed` turns true once the root container is explicitly closed; later input is ignored.
    `end` is then the offset just past the root in all text fed. `too_deep` means parsing stopped
    at `max_depth` nesting levels and the value is truncated.
    """

    def __init__(self, max_depth: int = MAX_DEPTH) -> None:
        self.max_depth = max_depth
        self.value: Any = None
        self.completed = False
        self.too_deep = False
        self.end: int | None = None
        self._buf = ""
        self._offset = 0  # characters already consumed and dropped from _buf
        self._started = False
        self._doubled = False  # root written as {{ ... }} (template escaping leaking through)
        self._stack: list[_Frame] = []
        self._pending = -1  # start of an incomplete token in _buf
        self._undo_record: tuple[Any, ...] | None = None
        # An open string is scanned once: (absolute start, offset scanned so far, text decoded so far).
        self._scan: tuple[int, int, str] = (-1, 0, "")
        # {{ ... } closed at the end of the text fed: blanks seen since, while its second `}` may still come
        self._tail: str | None = None

    def feed(self, text: str) -> Any:
        if self.completed or self.too_deep:
            if self._tail is not None:
                self._doubled_tail(text)
            return self.value
        self._undo_provisional()
        self._buf += text
        pos = self.match_run()
        if not self.completed and not self.too_deep:
            self._provide(self._pending)
        self._offset += pos
        self._buf = self._buf[pos:]
        return self.value

    # -- the state machine -------------------------------------------------------------------

    def match_run(self) -> int:
        buf, n = self._buf, len(self._buf)
        i = 0
        self._pending = -1
        while not self.completed:
            if i >= n:
                return n
            c = buf[i]
            if self._started and (c.isspace() or c == "/"):  # before the root, text is just prose
                j = skip_blank(buf, i)
                if j < 0 or j >= n:
                    return i if j < 0 else n
                i = j
            if not self._started:
                i = self._start_root(buf, i)
            else:
                i = self._step(buf, i)
            if i < 0:
                return n if self._pending < 0 else self._pending
        return i

    def _start_root(self, buf: str, i: int) -> int:
        found = _ROOT_START.search(buf, i)
        if found is None:  # nothing to parse yet: drop the text
            return -1
        i = found.start()
        if buf[i] == '"':
            read = self._string(buf, i)
            if read is None:
                self._pending = i
                return -1
            self.value, i = read
            self._started = True
            self._finish(buf, i)
            return i
        self.value = {} if buf[i] == "{" else []
        self._started = True
        self._stack.append(_Frame(self.value))
        return i + 1

    def _step(self, buf: str, i: int) -> int:
        frame, c = self._stack[-1], buf[i]
        if c in "}]":
            return self._close(buf, i)
        if frame.state == _COMMA:
            frame.state = _KEY if frame.is_dict else _VALUE
            return i + 1 if c == "," else i  # a missing comma is implied
        if frame.state == _KEY:
            return self._key(frame, buf, i)
        if frame.state == _COLON:
            if c == ",":  # a key without a value
                frame.box[frame.key] = None
                frame.state = _KEY
                return i + 1
            frame.state = _VALUE
            return i + 1 if c == ":" else i
        return self._value(frame, buf, i)

    def _key(self, frame: _Frame, buf: str, i: int) -> int:
        c = buf[i]
        if c in "{[,":
            if c == "{" and len(self._stack) == 1 and not frame.box:
                self._doubled = True
            return i + 1
        fast = _PLAIN_KEY.match(buf, i)
        if fast is not None:  # the common case, "key": , in one step
            frame.key, frame.state = fast.group(1), _VALUE
            return fast.end()
        if c in _QUOTES:
            read = self._string(buf, i)
        else:
            match = match_run(_UNQUOTED_KEY, buf, i)
            read = (match.group().strip(), match.end()) if match.end() < len(buf) else None
        if read is None:
            self._pending = i
            return -1
        frame.key, i = read
        frame.state = _COLON
        return i

    def _value(self, frame: _Frame, buf: str, i: int) -> int:
        c = buf[i]
        if c == ",":
            if frame.is_dict:
                frame.box[frame.key] = None
                frame.state = _KEY
            return i + 1
        if c == ":":
            return i + 1
        if c in "{[":
            if len(self._stack) >= self.max_depth:
                self.too_deep = True
                return -1
            child: dict[str, Any] | list[Any] = {} if c == "{" else []
            _put(frame, child)
            self._stack.append(_Frame(child))
            return i + 1
        resuming = self._scan[0] == self._offset + i  # a long open string: do not rescan it
        fast = None if resuming else _PLAIN_VALUE.match(buf, i)
        if fast is not None:  # the common cases, an integer or a string without escapes, in one step
            integer, double, single, comma = fast.groups()
            _put(frame, int(integer) if integer is not None else double if double is not None else single)
            if comma:
                frame.state = _KEY if frame.is_dict else _VALUE
            return fast.end()
        read = self._string(buf, i) if c in _QUOTES else read_bare(buf, i)
        if read is None:
            self._pending = i
            return -1
        _put(frame, read[0])
        return read[1]

    def _close(self, buf: str, i: int) -> int:
        want_dict = buf[i] == "}"
        depth = len(self._stack) - 1
        while depth >= 0 and self._stack[depth].is_dict != want_dict:
            depth -= 1
        if depth < 0:  # a stray closer: skip it
            return i + 1
        while len(self._stack) > depth:
            frame = self._stack.pop()
            if frame.is_dict and frame.state in (_COLON, _VALUE):
                frame.box[frame.key] = None
        return self._finish(buf, i + 1) if not self._stack else i + 1

    def _finish(self, buf: str, i: int) -> int:
        if self._doubled:
            j = skip_blank(buf, i)
            if 0 <= j < len(buf) and buf[j] == "}":
                i = j + 1
            elif j < 0 or j >= len(buf):
                self._tail = buf[i:]  # the doubled `}` may be in the next feed: `end` moves past it then
        self.completed = True
        self.end = self._offset + i
        return i

    def _doubled_tail(self, text: str) -> None:
        """After {{ ... } closed at the end of a feed: a `}` after only blanks belongs to the root (as when
        the whole text is fed at once), so that `end` does not depend on where the text was cut."""
        assert self._tail is not None and self.end is not None
        tail = self._tail + text
        j = skip_blank(tail, 0)
        if j < 0 or j >= len(tail):
            self._tail = tail if len(tail) <= TAIL_LIMIT else None
            return
        self._tail = None
        if tail[j] == "}":
            self.end += j + 1

    def _string(self, buf: str, i: int) -> tuple[str, int] | None:
        """(text, index after the closing quote), or None when the string is not closed yet."""
        q, n = buf[i], len(buf)
        token, scanned, text = self._scan
        if token != self._offset + i:
            scanned, text = 0, ""
        if buf.startswith(q * 3, i):
            end = buf.find(q * 3, max(i + 3, i + scanned - 2))
            if end < 0:
                self._scan = (self._offset + i, n - i, "")
                return None
            return buf[i + 3:end].strip(), end + 3
        if i + 2 == n and buf.startswith(q * 2, i):
            return None  # could still become a triple quote
        start = i + max(scanned, 1)
        end = match_run(_RUNS[q], buf, start).end()
        if end < n and buf[end] == q:
            return decode(buf[i + 1:end], q), end + 1
        cut = escape_boundary(buf, start, end)
        self._scan = (self._offset + i, cut - i, text + decode(buf[start:cut], q))
        return None

    # -- partial values shown between feeds --------------------------------------------------

    def _provide(self, start: int) -> None:
        buf = self._buf
        if not self._stack:
            if start >= 0 and not self._started:
                self.value = self._partial_value(buf, start)
                self._undo_record = ("root",)
            return
        frame = self._stack[-1]
        value = self._partial_value(buf, start) if start >= 0 and frame.state != _KEY else None
        if frame.is_dict and frame.state in (_COLON, _VALUE):
            box: dict[str, Any] = frame.box  # type: ignore[assignment]
            self._undo_record = (box, frame.key, frame.key in box, box.get(frame.key))
            box[frame.key] = value
        elif not frame.is_dict and start >= 0:
            frame.box.append(value)
            self._undo_record = (frame.box,)

    def _partial_value(self, buf: str, i: int) -> Any:
        q = buf[i]
        if q not in _QUOTES:
            return scalar(buf[i:])
        if buf.startswith(q * 3, i):
            return buf[i + 3:].strip()
        token, _, text = self._scan
        return text if token == self._offset + i else ""

    def _undo_provisional(self) -> None:
        record, self._undo_record = self._undo_record, None
        if record is None:
            return
        if record[0] == "root":
            self.value = None
        elif len(record) == 1:
            record[0].pop()
        elif record[2]:
            record[0][record[1]] = record[3]
        else:
            del record[0][record[1]]


def _put(frame: _Frame, value: Any) -> None:
    if frame.is_dict:
        frame.box[frame.key] = value
    else:
        frame.box.append(value)
    frame.state = _COMMA


def parse_dirty(text: str) -> Any | None:
    """The value in text, however broken; None if nothing parseable. Never raises."""
    return DirtyJson().feed(text)


def try_parse(text: str) -> Any:
    """Strict JSON first (fast, exact); the dirty parser when that fails."""
    try:
        return json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return parse_dirty(text)
