"""Search from the answer back to the prompt: a phrase (typed, or picked from an answer) is looked up in every part
of every recorded call — system prompt sections, history, extras, skills — and in each call's reply; every hit is
shown in context, highlighted, with the part's source file and extension, so "where did the model get this?" has
an answer. `%a0 search PHRASE` and the live inspector's Search tab both render `render_search`."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from a0nb.inspector import html as h
from a0nb.inspector.base import Rendering, style_for

CONTEXT = 70        # characters shown on each side of a hit
PER_PART = 3        # snippets shown per part (the count says how many there are)


@dataclass(frozen=True)
class Hit:
    call: int           # the call's index
    where: str          # the part's label, or "reply"
    source: str         # provenance: file (root) via extension; "" for a reply
    count: int          # occurrences in that part
    snippets: tuple[tuple[str, str, str], ...]   # (before, match, after)


def find(calls: Iterable[Any], phrase: str) -> list[Hit]:
    """Every part (and reply) of every call holding `phrase`, case-insensitively, whitespace-flexible."""
    words = phrase.split()
    if not words:
        return []
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
    hits = []
    for call in calls:
        texts = [(p.label, p.source, p.text) for p in call.parts]
        reply = (getattr(call, "reasoning", "") or "") + "\n" + (getattr(call, "response", "") or "")
        texts.append(("reply", "", reply))
        for where, source, text in texts:
            found = list(pattern.finditer(text or ""))
            if found:
                snippets = tuple((text[max(0, m.start() - CONTEXT):m.start()], m.group(0), text[m.end():m.end() + CONTEXT])
                                 for m in found[:PER_PART])
                hits.append(Hit(call.index, where, source, len(found), snippets))
    return hits


def render_search(calls: Sequence[Any], phrase: str, *, agent: Any = None, folder: str | Path | None = None) -> Rendering:
    style = style_for(agent, folder)
    hits = find(calls, phrase)
    total = sum(x.count for x in hits)
    head = f"“{phrase}”: {total} occurrence{'s' * (total != 1)} in {len(hits)} part{'s' * (len(hits) != 1)}" \
           f" of {len({x.call for x in hits})} call(s) (searched {len(calls)})"
    lines = [head]
    rows = []
    for x in hits:
        lines.append(f"  #{x.call} {x.where} ×{x.count}" + (f" · {style(x.source)}" if x.source else ""))
        shown = "".join(
            f'<div style="{h.MONO};white-space:pre-wrap;margin:2px 0">…{h.esc(style(b))}'
            f'<mark style="background:#fff8c5;color:#1f2328">{h.esc(m)}</mark>{h.esc(style(a))}…</div>' for b, m, a in x.snippets)
        more = h.note(f"{x.count - len(x.snippets)} more in this part") if x.count > len(x.snippets) else ""
        rows.append((f"#{x.call}", h.esc(x.where) + f" {h.muted('×' + str(x.count))}",
                     h.esc(style(x.source)) if x.source else h.muted("the model's reply"), shown + more))
    body = h.table(["call", "part", "source", "where the phrase is"], rows, ("50px", "160px", "200px", "")) if rows \
        else h.note("No part of any recorded call contains this phrase.")
    return Rendering("\n".join(lines), h.root(body, head), {"phrase": phrase, "hits": len(hits)})


__all__ = ["Hit", "find", "render_search"]
