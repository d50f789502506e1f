"""Inline styles as classes, for the live widgets only.

The static renderings carry inline styles (GitHub and nbviewer strip <style>), so each element repeats its
declarations: a table cell's ~90 characters, a badge's ~150. The live view is never saved (finish() closes
its widgets), so there every `style="…"` becomes a class named after its declarations, and each class is
sent once per live turn in a hidden stylesheet (one widget per batch of new rules). The page shows the same: each rule holds exactly the
element's declarations, scoped below the live view (`.a0-live`) with two classes of specificity, above the
page's own single-class rules as the inline style was."""
from __future__ import annotations

import re
import zlib

SCOPE = "a0-live"
_STYLED = re.compile(r'(?: class="([^"]*)")? style="([^"]*)"')


class LiveStyles:
    """The classes one live turn has defined; `squeeze()` rewrites HTML and collects new rules."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}   # declarations -> class name
        self._new: list[str] = []          # rules not sent yet

    def squeeze(self, html: str) -> str:
        if 'style="' not in html:
            return html
        names = self.names

        def one(m: re.Match[str]) -> str:
            decls = m.group(2)
            name = names.get(decls)
            if name is None:
                # named after its declarations: the same style has the same class in every live turn on the page
                name = names[decls] = f"a0s{zlib.crc32(decls.encode()):08x}"
                self._new.append(f".{SCOPE} .{name}{{{decls}}}")
            return f' class="{m.group(1)} {name}"' if m.group(1) else f" class={name}"
        return _STYLED.sub(one, html)

    def sheet(self) -> str | None:
        """A stylesheet of the rules added since the last call (None: no new rule)."""
        if not self._new:
            return None
        sheet = "<style>" + "".join(self._new) + "</style>"
        self._new.clear()
        return sheet


__all__ = ["LiveStyles", "SCOPE"]
