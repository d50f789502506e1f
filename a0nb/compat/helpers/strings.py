"""Agent Zero's `helpers.strings`: text clean-up shared by logs and tool results, and the `§§include(path)`
alias expansion."""
from __future__ import annotations

import re

from a0nb.compat.helpers import files

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


def replace_file_includes(text: str, placeholder_pattern: str = r"§§include\(([^)]+)\)") -> str:
    """Each alias in `text` replaced by the named file's text (a relative path is under the base folder,
    `$A0NB_HOME`); an alias whose file cannot be read stays as written. (a0nb's own answers expand the alias
    more carefully: a0nb.engine.include_alias reads only inside the notebook folder and `$A0NB_HOME`.)"""
    if not text:
        return text

    def read(match: re.Match[str]) -> str:
        try:
            return files.read_file(files.fix_dev_path(match.group(1)))
        except Exception:  # missing, unreadable or not text: the alias stays
            return match.group(0)

    return re.sub(placeholder_pattern, read, text)
