"""Agent Zero's `§§include(path)` alias in the answer a user sees: the model names a file instead of copying
its text (upstream's response-tool tips teach it to), and the answer shows the file's text in its place.

As upstream, only what is shown is expanded: history, the call records and a superior agent keep the alias.
Unlike upstream, a0nb reads only files inside the notebook folder or `$A0NB_HOME` (a link is followed to
where it points), up to MAX_BYTES each and MAX_TOTAL in all: a model must not be able to show a file from
elsewhere on the machine without the code tool and its approval. An alias that names no such readable text
file stays as written, and a diagnostic says why. The caller masks the result like any answer."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

from a0nb.diagnostics import Diagnostics

__all__ = ["ALIAS", "MAX_BYTES", "MAX_TOTAL", "expand"]

ALIAS = re.compile(r"§§include\(([^)]+)\)")
MAX_BYTES = 1_000_000  # one included file at most
MAX_TOTAL = 4_000_000  # every file one answer includes


def expand(text: str, workdir: Path, roots: Iterable[Path], diagnostics: Diagnostics) -> str:
    """`text` with each `§§include(path)` replaced by the file's text; a relative path is taken from `workdir`."""
    if "§§include(" not in text:
        return text
    allowed = [os.path.realpath(root) for root in roots]
    budget = [MAX_TOTAL]

    def replace(match: re.Match[str]) -> str:
        written = match.group(0)
        name = match.group(1).strip()
        problem, content = _read(name, workdir, allowed, budget)
        if problem:
            diagnostics.add("warning", "answer", f"{written} was left as written: {problem}",
                            os.path.join(workdir, os.path.expanduser(name)),
                            fix="name a text file inside the notebook folder or $A0NB_HOME")
            return written
        return content

    return ALIAS.sub(replace, text)


def _read(name: str, workdir: Path, allowed: list[str], budget: list[int]) -> tuple[str, str]:
    """('', the file's text), or (why not, '')."""
    path = os.path.realpath(os.path.join(workdir, os.path.expanduser(name)))
    if not any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in allowed):
        return "only files inside the notebook folder or $A0NB_HOME are included", ""
    if not os.path.isfile(path):  # (a folder, a missing file, or a pipe or device that a read could block on)
        return "no such file", ""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        return f"cannot read it ({exc.strerror or exc})", ""
    if len(data) > MAX_BYTES:
        return f"it is larger than {MAX_BYTES:,} bytes", ""
    if len(data) > budget[0]:
        return f"the answer's includes would pass {MAX_TOTAL:,} bytes", ""
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError:
        return "it is not UTF-8 text", ""
    budget[0] -= len(data)
    return "", content
