"""Secrets: `secrets.env` files in dotenv syntax, `§§secret(NAME)` aliases resolved for tools, and
masking of real values back to aliases everywhere text leaves the agent (history, records, streams)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from a0nb.diagnostics import Diagnostics
from a0nb.errors import RepairableError
from a0nb.files.credentials import encoded_forms

__all__ = [
    "ALIAS_RE", "DotenvEntry", "SecretEntry", "Secrets", "StreamMasker", "alias", "parse_dotenv",
]

ALIAS_RE = re.compile(r"§§secret\(([A-Za-z_][A-Za-z0-9_]*)\)")
KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MIN_MASKED = 4  # shorter values are masked only as whole words (inside words they would mask ordinary text)
MIN_WORD = 3
WORD = "A-Za-z0-9_"
PARTIAL_STARS = 3  # a stream cut off inside a secret shows `***` once this much of it was seen
MEMO_ENTRIES = 65_536  # masked texts a secret set remembers (history texts come back in every request)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}
_INLINE_COMMENT = re.compile(r"\s#")


def alias(key: str) -> str:
    return f"§§secret({key.upper()})"


# ---------------------------------------------------------------- dotenv


@dataclass(frozen=True)
class DotenvEntry:
    key: str
    value: str
    comment: str
    line: int


def parse_dotenv(text: str) -> tuple[list[DotenvEntry], list[tuple[int, str]]]:
    """Entries and `(line, reason)` problems. Comment lines directly above a key (no blank line in
    between) and an inline `# comment` become its comment. Reasons never quote a value."""
    lines = text.splitlines()
    entries: list[DotenvEntry] = []
    problems: list[tuple[int, str]] = []
    pending: list[str] = []
    i = 0
    while i < len(lines):
        lineno, stripped = i + 1, lines[i].strip()
        i += 1
        if not stripped:
            pending = []
            continue
        if stripped.startswith("#"):
            pending.append(stripped[1:].strip())
            continue
        comment, pending = "\n".join(pending), []
        if stripped.startswith("export "):
            stripped = stripped[len("export "):].lstrip()
        key, eq, rest = stripped.partition("=")
        key = key.strip()
        if not eq:
            problems.append((lineno, "expected KEY=value"))
            continue
        if not KEY_RE.fullmatch(key):
            problems.append((lineno, "the key is not a valid name (letters, digits and _, not starting with a digit)"))
            continue
        parsed = _parse_value(rest, lines, i)
        if isinstance(parsed, str):
            problems.append((lineno, parsed))
            continue
        value, inline, i = parsed
        comment = "\n".join(c for c in (comment, inline) if c)
        entries.append(DotenvEntry(key, value, comment, lineno))
    return entries, problems


def _parse_value(rest: str, lines: list[str], nxt: int) -> tuple[str, str, int] | str:
    """`(value, inline comment, index of the next line)`, or the reason the value is malformed.
    A quoted value may continue over following lines (PEM keys)."""
    body = rest.lstrip()
    if not body or body[0] not in "\"'":
        m = _INLINE_COMMENT.search(rest)
        if m is None:
            return rest.strip(), "", nxt
        return rest[: m.start()].strip(), rest[m.end():].strip(), nxt
    quote, text, j = body[0], body[1:], nxt
    while True:
        end = _closing_quote(text, quote)
        if end >= 0:
            break
        if j >= len(lines):
            return f"unterminated {quote} quote"
        text += "\n" + lines[j]
        j += 1
    after = text[end + 1:].strip()
    if after and not after.startswith("#"):
        return "unexpected text after the closing quote"
    raw = text[:end]
    value = _unescape(raw) if quote == '"' else raw
    return value, after[1:].strip(), j


def _closing_quote(text: str, quote: str) -> int:
    i = 0
    while i < len(text):
        if quote == '"' and text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i
        i += 1
    return -1


def _unescape(raw: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), raw, flags=re.S)


# ---------------------------------------------------------------- secrets


@dataclass(frozen=True)
class SecretEntry:
    key: str
    comment: str


class Secrets:
    """Immutable set of secrets: the one masking function of a0nb. `resolve` goes alias → value (tool
    arguments only, `secrets.env` names only); `mask` goes value → alias (everything the agent stores,
    sends or shows). `credentials` are further values to mask that no alias resolves to (environment
    credentials, `.env` values), shown as `<redacted:NAME>`."""

    def __init__(self, values: Mapping[str, str] | None = None, comments: Mapping[str, str] | None = None,
                 credentials: Iterable[tuple[str, str]] = ()) -> None:
        self._values = {k.upper(): v for k, v in (values or {}).items()}
        comments = {k.upper(): c for k, c in (comments or {}).items()}
        self._comments = {k: comments.get(k, "") for k in self._values}
        self._credentials = tuple(credentials)
        self._short: set[str] = set()
        self._aliases = self._needle_aliases()
        self._pattern = self._compile()
        self._memo: dict[str, str] = {}  # text -> masked text (`_cached`)

    @classmethod
    def load(cls, files: Sequence[Path], diagnostics: Diagnostics,
             credentials: Iterable[tuple[str, str]] = ()) -> Secrets:
        """Missing files are skipped; on a duplicate key the later file wins."""
        values: dict[str, str] = {}
        comments: dict[str, str] = {}
        for path in files:
            for entry in _read_entries(Path(path), diagnostics):
                key = entry.key.upper()
                values[key] = entry.value
                comments[key] = entry.comment or comments.get(key, "")
        return cls(values, comments, credentials)

    def with_credentials(self, credentials: Iterable[tuple[str, str]]) -> Secrets:
        return Secrets(self._values, self._comments, credentials)

    @property
    def credentials(self) -> tuple[tuple[str, str], ...]:
        return self._credentials

    def keys(self) -> list[SecretEntry]:
        return [SecretEntry(k, self._comments[k]) for k in self._values]

    def values(self) -> list[str]:
        return [v for v in self._values.values() if v]

    def items(self) -> dict[str, str]:
        """NAME → value, for writers that mask with the alias (cassettes); never display this."""
        return {k: v for k, v in self._values.items() if v}

    def __bool__(self) -> bool:
        return bool(self._values) or bool(self._aliases)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:  # never the values: reprs end up in tracebacks and logs
        return f"Secrets({', '.join(self._values)})"

    # alias -> value

    def resolve(self, value: Any) -> Any:
        if isinstance(value, str):
            return ALIAS_RE.sub(self._lookup, value) if "§§" in value else value
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.resolve(v) for v in value)
        return value

    def _lookup(self, m: re.Match[str]) -> str:
        key = m.group(1).upper()
        if key in self._values:
            return self._values[key]
        if not self._values:
            raise RepairableError(f"Unknown secret alias {m.group(0)}: no secrets are defined.")
        available = ", ".join(alias(k) for k in self._values)
        raise RepairableError(f"Unknown secret alias {m.group(0)}. Available secrets: {available}.")

    # value -> alias

    def mask(self, value: Any) -> Any:
        """Mask strings anywhere in str/dict/list/tuple/set values, dict keys included; same types back
        (new containers, also when nothing was masked)."""
        cls = value.__class__
        if cls is str:
            return self._cached(value)
        if cls is dict:  # (the common case, without a call per key and value)
            memo, mask = self._memo, self.mask
            return {(memo[k] if k.__class__ is str and k in memo else mask(k)):
                    (memo[v] if v.__class__ is str and v in memo else mask(v)) for k, v in value.items()}
        if isinstance(value, str):
            return self.mask_text(value)
        if isinstance(value, dict):
            items = [(self.mask(k), self.mask(v)) for k, v in value.items()]
            return _rebuild(value, items, dict)
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*(self.mask(v) for v in value))
        for base in (list, tuple, set, frozenset):
            if isinstance(value, base):
                return _rebuild(value, [self.mask(v) for v in value], base)
        return value

    def mask_text(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(self._replacement, text)

    def mask_messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`mask(messages)` for a request whose top-level dicts are the caller's own (fresh each call): a
        `{role, content}` message whose two texts were seen before and hold no secret is kept as it is
        (no call per message); any other is masked (and copied) by `mask`. The same texts come back step
        after step (history), so each is searched once per secret set."""
        memo, mask = self._memo, self.mask
        try:
            sizes = list(map(len, messages))  # (in C: no Python call per message)
        except TypeError:
            return [mask(m) for m in messages]
        return [m if n == 2 and m.__class__ is dict and "role" in m and "content" in m
                and (r := m["role"]).__class__ is str and (c := m["content"]).__class__ is str
                and r in memo and c in memo and memo[r] is r and memo[c] is c else mask(m)
                for m, n in zip(messages, sizes)]

    def mask_texts(self, texts: list[str]) -> list[str]:
        """`mask_text` of each; texts seen before cost a lookup."""
        memo, cached = self._memo, self._cached
        return [memo[t] if t.__class__ is str and t in memo else cached(t) for t in texts]

    def _cached(self, text: str) -> str:
        """`mask_text`, remembered for the life of this (immutable) secret set: history texts come back in
        every request. Bounded: forgotten at MEMO_ENTRIES texts (streamed chunks use `mask_text`, not this)."""
        if text.__class__ is not str:
            return self.mask_text(text)
        memo = self._memo
        hit = memo.get(text)
        if hit is None:
            hit = self.mask_text(text)
            if len(memo) >= MEMO_ENTRIES:
                memo.clear()
            memo[text] = hit
        return hit

    def mask_live(self, text: str) -> str:
        """`text` so far of a stream still running: masked, and a trailing start of a secret hidden."""
        masker = StreamMasker(self)
        return masker.feed(text) + masker.flush()

    def _replacement(self, m: re.Match[str]) -> str:
        # an alias already in the text stays as is, so masking twice changes nothing
        return m.group(0) if m.group(1) else self._aliases[m.group(0)]

    def _needle_aliases(self) -> dict[str, str]:
        """Each maskable value in each encoded form (JSON-escaped, URL-encoded, hex, base64)."""
        out: dict[str, str] = {}
        named = [(alias(k), v) for k, v in self._values.items()]
        named += [(f"<redacted:{k}>", v) for k, v in self._credentials]
        for label, value in named:
            if not value.strip():
                continue
            visible = sum(not c.isspace() for c in value)
            if visible < MIN_WORD:  # one or two characters: no masking could tell them from text
                continue
            if visible < MIN_MASKED:
                self._short.add(value)
                out.setdefault(value, label)
                continue
            for form in sorted(encoded_forms(value)):
                out.setdefault(form, label)
        return out

    def _compile(self) -> re.Pattern[str] | None:
        if not self._aliases:
            return None
        needles = sorted(self._aliases, key=len, reverse=True)  # longest first wins at a position
        # the lookahead lets the engine skip most positions without trying every alternative
        firsts = re.escape("".join(sorted({n[0] for n in needles} | {"§"})))
        alternatives = [f"(?<![{WORD}]){re.escape(n)}(?![{WORD}])" if n in self._short else re.escape(n)
                        for n in needles]
        return re.compile(f"(?=[{firsts}])(?:({ALIAS_RE.pattern})|" + "|".join(alternatives) + ")")

    def _needles(self) -> list[str]:
        return list(self._aliases)


def _read_entries(path: Path, diagnostics: Diagnostics) -> list[DotenvEntry]:
    if not path.is_file():
        return []
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        diagnostics.add("error", "secrets", f"cannot read secrets file: {type(exc).__name__}", path,
                        fix="save it as UTF-8 text in dotenv syntax")
        return []
    entries, problems = parse_dotenv(text)
    for line, reason in problems:
        diagnostics.add("warning", "secrets", f"line ignored: {reason}", path, line,
                        fix='write KEY=value, KEY="quoted value" or # comment')
    return entries


def _rebuild(original: Any, items: Iterable[Any], base: type) -> Any:
    """The same container type when it can be built from items (subclasses that cannot: their base)."""
    try:
        return type(original)(items)
    except TypeError:
        return base(items)


# ---------------------------------------------------------------- streams


class StreamMasker:
    """Masks text that arrives in chunks. A tail that could be the start of a secret is held back
    until the next chunk decides it, so no secret is ever emitted split across two outputs."""

    def __init__(self, secrets: Secrets) -> None:
        self._secrets = secrets
        self._needles = secrets._needles()
        self._pattern = secrets._pattern
        self._buf = ""

    def feed(self, chunk: str) -> str:
        if not self._needles:
            return chunk
        self._buf += chunk
        cut = self._safe_cut(self._buf)
        out, self._buf = self._buf[:cut], self._buf[cut:]
        return self._secrets.mask_text(out)

    def flush(self) -> str:
        """The masked remainder; an unfinished secret of at least 3 characters becomes `***`."""
        tail, self._buf = self._buf, ""
        if not self._needles:
            return tail
        cut = self._safe_cut(tail)
        held = tail[cut:]
        if len(held) >= PARTIAL_STARS and self._partial_start(held) == 0:
            return self._secrets.mask_text(tail[:cut]) + "***"
        return self._secrets.mask_text(tail)

    @property
    def pending(self) -> str:
        return self._buf

    def _safe_cut(self, buf: str) -> int:
        cut = self._partial_start(buf)
        assert self._pattern is not None
        for m in self._pattern.finditer(buf):
            if m.start() >= cut:
                break
            if m.end() > cut:  # a whole match across the cut would be split between two outputs
                return m.start()
        return cut

    def _partial_start(self, buf: str) -> int:
        """Start of the longest suffix of `buf` that is a proper prefix of some secret form."""
        cut = len(buf)
        for needle in self._needles:
            i = buf.find(needle[0], max(0, len(buf) - len(needle) + 1), cut)
            while i != -1:
                if needle.startswith(buf[i:]):
                    cut = i
                    break
                i = buf.find(needle[0], i + 1, cut)
        return cut
