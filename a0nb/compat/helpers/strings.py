"""Agent Zero's `helpers.strings`: text clean-up shared by logs and tool results."""
from __future__ import annotations

import re

_SURROGATE = re.compile(r"[\ud800-\udfff]")


def sanitize_string(text: object, encoding: str = "utf-8") -> str:
    """The text with lone surrogates (which no encoder accepts) replaced by `?`."""
    value = text if isinstance(text, str) else str(text)
    return _SURROGATE.sub("?", value)


def truncate_text(text: str, length: int, at_end: bool = True, replacement: str = "...") -> str:
    if len(text) <= length:
        return text
    keep = max(0, length - len(replacement))
    return text[:keep] + replacement if at_end else replacement + text[len(text) - keep:]
