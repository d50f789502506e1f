"""Load the notebook folder's `.env` into the environment (API keys for providers), without overriding
anything already set and without a python-dotenv dependency; reports names, never values."""
from __future__ import annotations

import os
from pathlib import Path
from typing import MutableMapping

from a0nb.diagnostics import Diagnostics
from a0nb.files.secrets import parse_dotenv

__all__ = ["load_dotenv"]


def load_dotenv(folder: str | Path, *, filename: str = ".env", diagnostics: Diagnostics | None = None,
                environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Set each variable of `folder/filename` that is not set yet; return the names that were set.

    A missing file is not an error. Malformed lines are skipped and, given `diagnostics`, reported by
    line number (the reasons never quote a value)."""
    env = os.environ if environ is None else environ
    path = Path(folder) / filename
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        if diagnostics is not None:
            diagnostics.add("warning", "config", f"{path} could not be read ({type(exc).__name__})", path=path,
                            fix="save it as UTF-8 text with KEY=value lines")
        return []
    entries, problems = parse_dotenv(text)
    if diagnostics is not None:
        for line, reason in problems:
            diagnostics.add("warning", "config", f"{path.name}: {reason}", path=path, line=line,
                            fix="write KEY=value, one per line")
    loaded: list[str] = []
    for entry in entries:
        if entry.key in env:
            continue
        env[entry.key] = entry.value
        loaded.append(entry.key)
    return loaded
