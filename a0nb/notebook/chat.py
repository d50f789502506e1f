"""Input transformers: chat mode (a plain cell becomes a `%%a0` message; `%`, `%%`, `!` cells are left
alone; `%%python` cells run as Python) and the guard that keeps a trailing `?` of `%a0 ask ...?` in the message."""
from __future__ import annotations

import re
from typing import Any, Callable

_PASS_THROUGH = ("%", "!")
PYTHON_MAGIC = "%%python"
_ASK_LINE = re.compile(r"^(\s*)%a0(\s+ask\s.*?)\s*$")


class ChatMode:
    """Installs and removes the transformer and the `%%python` cell magic on one shell."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.on = False
        self._bypass = 0
        self._saved_python: Callable[..., Any] | None = None
        self._transformer = self._make_transformer()

    def _make_transformer(self) -> Callable[[list[str]], list[str]]:
        def a0nb_chat_transformer(lines: list[str]) -> list[str]:
            return lines if self._bypass else transform(lines)
        a0nb_chat_transformer.has_side_effects = True  # type: ignore[attr-defined]
        return a0nb_chat_transformer

    def enable(self) -> None:
        if self.on:
            return
        cleanup = self.shell.input_transformers_cleanup
        if self._transformer not in cleanup:
            # first, so the raw text of the message reaches the agent (prompt stripping runs later)
            cleanup.insert(0, self._transformer)
        cells = self.shell.magics_manager.magics["cell"]
        self._saved_python = cells.get("python")
        self.shell.register_magic_function(self.python_cell, magic_kind="cell", magic_name="python")
        self.on = True

    def disable(self) -> None:
        if not self.on:
            return
        cleanup = self.shell.input_transformers_cleanup
        while self._transformer in cleanup:
            cleanup.remove(self._transformer)
        cells = self.shell.magics_manager.magics["cell"]
        if self._saved_python is not None:
            cells["python"] = self._saved_python
        else:
            cells.pop("python", None)
        self._saved_python = None
        self.on = False

    def python_cell(self, line: str, cell: str) -> None:
        """Run the body as ordinary notebook Python (IPython syntax included), not as a message."""
        self._bypass += 1
        try:
            self.shell.run_cell(cell, store_history=False)
        finally:
            self._bypass -= 1


def keep_question_marks(lines: list[str]) -> list[str]:
    """`%a0 ask ... ?` lines become the explicit magic call, so IPython's `name?` help syntax cannot take them."""
    if not any("%a0" in line for line in lines):
        return lines
    out = []
    for line in lines:
        m = _ASK_LINE.match(line)
        if m is None or not m.group(2).endswith("?"):
            out.append(line)
            continue
        out.append(f"{m.group(1)}get_ipython().run_line_magic('a0', {m.group(2).strip()!r})\n")
    return out


def transform(lines: list[str]) -> list[str]:
    """A plain cell becomes `%%a0` + the cell; `%%python` cells lose their first line."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return lines
    head = lines[first].lstrip()
    if head.split(None, 1)[0] == PYTHON_MAGIC:
        # the body runs as the cell itself: real tracebacks, error status and `Out` as usual
        return lines[first + 1:]
    if head.startswith(_PASS_THROUGH):
        return lines
    return ["%%a0\n", *lines[first:]]


__all__ = ["ChatMode", "transform", "keep_question_marks"]
