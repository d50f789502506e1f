"""Renders of a flat prompt file (text and placeholders only: no conditionals, includes, variables loader or
warnings) by putting the values into the file's text. For a file rendered with a value that differs at every
call (the extras message: its JSON changes each step) the render cache never hits; this gives the same
`Rendered` as a full render at the cost of a join. Valid while the file is as it was, checked as the render
cache checks (no stat when the owner watches the folders), and forgotten when the folders change."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from a0nb.files.prompt_lookup import RACY_NS, stat_key
from a0nb.files.prompt_vars import as_text
from a0nb.files.templates import Text, Var, fence_body

if TYPE_CHECKING:
    from a0nb.files.prompts import PromptEngine
    from a0nb.files.rendered import Rendered

__all__ = ["FlatRenders"]

# per (name, the kwargs' names): the file's (path, (mtime_ns, size)), its texts and placeholders in turn
# (texts[0], names[0], texts[1], ...), and the sources and unknown names of a render of it
_Entry = tuple[tuple[Any, tuple[int, int]], tuple[str, ...], tuple[str, ...], tuple[Any, ...]]


class FlatRenders:
    def __init__(self) -> None:
        self._entries: dict[tuple[str, ...], _Entry] = {}

    def clear(self) -> None:
        self._entries.clear()

    def render(self, engine: "PromptEngine", name: str, kwargs: dict[str, Any]) -> "Rendered | None":
        """The render of a flat file learnt before with arguments of these names, None otherwise."""
        text = self.text(engine, name, kwargs) if self._entries else None
        if text is None:
            return None
        key = (name, *kwargs)
        sources = self._entries[key][3]
        return sources[0](text, sources[1], ())  # type: ignore[no-any-return]

    def text(self, engine: "PromptEngine", name: str, kwargs: dict[str, Any]) -> str | None:
        """`render(...).text` without the `Rendered` (what `Agent.read_prompt` hands out)."""
        if not self._entries:
            return None
        key = (name, *kwargs)
        hit = self._entries.get(key)
        if hit is None:
            return None
        (path, stamp), texts, names, _sources = hit
        if not engine._folders.trust_listings and stat_key(path) != stamp:
            del self._entries[key]
            return None
        out = [texts[0]]
        for var, text in zip(names, texts[1:]):
            value = kwargs[var]
            out += (value if value.__class__ is str else as_text(value), text)
        text = "".join(out)
        first = text[:1]  # (a fenced json block can only begin with a fence or white space)
        stripped = fence_body(text) if first and (first in "`~" or first.isspace()) else None
        if engine.recording is not None:
            engine.recording.append(())  # reusable: the output depends on the file and the arguments only
        return stripped[0] if stripped else text

    def learn(self, engine: "PromptEngine", name: str, kwargs: dict[str, Any], rendered: "Rendered",
              loaded: list[Any]) -> None:
        """After a full render of `name`: remember the file when it is flat and every placeholder had a value."""
        if loaded or rendered.unknown or len(rendered.sources) != 1 or len(self._entries) >= 256:
            return
        index = engine._located.get((name, 0))
        plan = engine._plans.get((name, index, "direct")) if index is not None else None
        if plan is None or plan[3] is not None or plan[1].notes or plan[0] != rendered.sources[0].path:
            return
        texts, names, last = [], [], ""
        for node in plan[1].nodes:
            if node.__class__ is Text:
                last += node.text  # type: ignore[union-attr]
            elif node.__class__ is Var and node.name in kwargs:  # type: ignore[union-attr]
                texts.append(last)
                names.append(node.name)  # type: ignore[union-attr]
                last = ""
            else:
                return
        texts.append(last)
        now, stamp = time.time_ns(), stat_key(plan[0])
        if stamp is None or now - stamp[0] < RACY_NS:
            return  # recently written: an edit within the timestamp tick could go unseen
        key = (name, *kwargs)
        self._entries[key] = ((plan[0], stamp), tuple(texts), tuple(names),
                                          (rendered.__class__, rendered.sources))
