"""The summary of a batch (`Agent.map` / `%a0 map`): one row per item with its status and answer, each row
linked to the item's own turn card (its steps, model calls and composition) further down."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from a0nb.inspector import html as h
from a0nb.inspector import text as t
from a0nb.inspector.base import Rendering
from a0nb.inspector.views import render_turn

__all__ = ["render_map"]

_ID = re.compile(r"[^A-Za-z0-9_-]+")


def _status(turn: Any) -> str:
    if turn.error is None:
        return "ok"
    return "interrupted" if turn.interrupted else "failed"


def render_map(result: Any, *, name: str = "map", agent: Any = None, folder: str | Path | None = None) -> Rendering:
    """`name` makes the item anchors unique in a notebook (the variable the results went to)."""
    key = _ID.sub("-", name) or "map"
    n, failed = len(result), len(result.failed)
    head = (f"{t.plural(n, 'item')} · {n - failed} ok · {failed} failed"
            + (" · interrupted (finished items kept)" if result.interrupted else "") + f" · executor {result.executor}")
    lines = [head]
    rows, cards = [], []
    for i, (item, turn) in enumerate(zip(result.items, result)):
        status = _status(turn)
        shown = turn.text if turn.error is None else str(turn.error)
        lines.append(f"{i:>3}  {status:<11} {t.one_line(item, 28):<28}  {t.one_line(shown, 60)}")
        anchor = f"a0-{key}-{i}"
        colour = {"ok": "ok", "failed": "error", "interrupted": "warning"}[status]
        rows.append([str(i), h.esc(t.one_line(item, 60)), h.badge(status, colour),
                     str(len(turn.calls)), h.esc(t.one_line(shown, 120)), f'<a href="#{anchor}">inspect ↓</a>'])
        card = render_turn(turn, agent=agent, folder=folder).html
        cards.append(f'<div id="{anchor}">' + h.details(f"<b>item {i}</b> {h.muted(t.one_line(item, 80))}", card) + "</div>")
    body = (h.table(["#", "item", "status", "calls", "answer", ""], rows, ["3em", "", "7em", "4em", "", "6em"])
            + h.details(f"<b>Items</b> {h.muted('each item’s turn: its steps and model calls')}", "".join(cards)))
    meta = {"items": n, "failed": failed, "interrupted": result.interrupted, "executor": result.executor,
            "elapsed": round(result.elapsed, 3), "cost": result.cost}
    return Rendering("\n".join(lines), h.root(body, f"Batch · {head}"), meta)
