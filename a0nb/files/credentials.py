"""Which values count as secrets besides `secrets.env`: credentials in the environment and in the notebook
folder's `.env`, and the encoded forms (JSON-escaped, URL-encoded, hex, base64) a value takes in output."""
from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path
from typing import Callable, Iterable, Mapping
from urllib.parse import quote, quote_plus, unquote, urlsplit

__all__ = ["CREDENTIAL_NAME", "credential_values", "dotenv_values", "encoded_forms", "is_credential_name"]

# a name that holds a credential: provider keys (OPENAI_API_KEY), tokens, passwords, cloud and database settings
CREDENTIAL_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE|PRIVATE|^AWS_|"
                             r"^DATABASE_URL$|_DSN$", re.I)
# names that say where a credential is, or which region/profile to use, not the credential itself
NOT_CREDENTIAL = re.compile(r"^A0NB_|_(FILE|PATH|DIR|BUNDLE|REGION|PROFILE|ENV)$", re.I)
USERINFO_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/@\s]*:[^/@\s]+@")
TRIVIAL = frozenset({"true", "false", "none", "null", "yes", "no", "on", "off"})
MIN_CREDENTIAL = 6  # environment values shorter than this are flags and ports, not keys
MIN_ENCODED = 8     # an encoded form shorter than this would match ordinary text


def is_credential_name(name: str) -> bool:
    return bool(CREDENTIAL_NAME.search(name)) and not NOT_CREDENTIAL.search(name)


def credential_values(environ: Mapping[str, str] | None = None,
                      names: Iterable[str | None] = ()) -> list[tuple[str, str]]:
    """`(NAME, value)` for every environment variable used as a credential: a credential-like name, a name in
    `names` (the settings' `api_key_env`), or a URL value with a password (its password listed too)."""
    env = os.environ if environ is None else environ
    wanted = {n for n in names if n}
    out: list[tuple[str, str]] = []
    for name, value in env.items():
        url = bool(USERINFO_URL.match(value))
        if name in wanted or url or is_credential_name(name):
            out.extend((name, v) for v in _with_password(value) if _usable(v))
    return out


def dotenv_values(folder: Path, parse: Callable[[str], Iterable[tuple[str, str]]]) -> list[tuple[str, str]]:
    """`(NAME, value)` of the folder's `.env` (a0nb's own `A0NB_*` settings excepted); [] when unreadable."""
    try:
        text = (Path(folder) / ".env").read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return []
    out: list[tuple[str, str]] = []
    for name, value in parse(text):
        if not name.upper().startswith("A0NB_"):
            out.extend((name, v) for v in _with_password(value) if _usable(v))
    return out


def _usable(value: str) -> bool:
    v = value.strip()
    return len(v) >= MIN_CREDENTIAL and v.lower() not in TRIVIAL


def _with_password(value: str) -> list[str]:
    """The value, and for a URL with credentials (`postgres://user:pw@host/db`) its password alone too."""
    if not USERINFO_URL.match(value):
        return [value]
    try:
        password = urlsplit(value).password or ""
    except ValueError:
        return [value]
    return [value] + [p for p in {password, unquote(password)} if p]


def encoded_forms(value: str) -> set[str]:
    """The value as it appears in JSON, URLs, hex dumps and base64 (each of the three byte alignments, so
    the value is found inside a longer encoded blob such as `user:password` in a Basic auth header)."""
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    if len(value) < MIN_CREDENTIAL:
        return forms
    raw = value.encode("utf-8")
    forms |= {quote(value, safe=""), quote(value), quote_plus(value), raw.hex(), raw.hex().upper()}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for offset in range(3):
            core = _base64_core(encode, raw, offset)
            if len(core) >= MIN_ENCODED:
                forms.add(core)
    return {f for f in forms if f}


def _base64_core(encode: Callable[[bytes], bytes], raw: bytes, offset: int) -> str:
    """The base64 characters that depend only on `raw` when it starts `offset` bytes into a longer blob."""
    text = encode(b"\0" * offset + raw).decode("ascii").rstrip("=")
    start = (0, 2, 3)[offset]  # characters that also hold bits of the bytes before
    end = len(text) - (1 if (offset + len(raw)) % 3 else 0)  # the last one also holds bits of the bytes after
    return text[start:end]
