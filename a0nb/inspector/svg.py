"""SVG charts (no JS): token composition per call across a turn as stacked bars, and history size across a
turn with the compaction points marked. `as_image` wraps one in an <img> with a data: URI, which every viewer
shows (an untrusted JupyterLab notebook, GitHub, nbviewer sanitize inline <svg> into text)."""
from __future__ import annotations

import base64
from typing import Any, Sequence

from a0nb.inspector.compose import Palette, history_tokens
from a0nb.inspector.html import INK_FIXED as INK, LINE_FIXED as LINE, MUTED_FIXED as MUTED, esc

W, H = 500, 210
LEFT, RIGHT, TOP, BOTTOM = 58, 14, 26, 34
FONT = "font-family=\"-apple-system,Segoe UI,Helvetica,Arial,sans-serif\""


def _nice(maximum: int) -> int:
    """A round axis top at or above `maximum` whose quarters are round too."""
    if maximum <= 0:
        return 8
    quarter = maximum / 4
    scale = 10 ** (len(str(int(quarter))) - 1)
    step = next(m * scale for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10) if m * scale >= quarter)
    return int(4 * max(step, 1))


def _frame(title: str, top: int, n: int) -> list[str]:
    ph = H - TOP - BOTTOM
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" '
           f'style="max-width:100%;height:auto;background:#ffffff;border:1px solid {LINE};border-radius:6px;margin:4px 0">',
           f'<title>{esc(title)}</title>',
           f'<text x="{LEFT}" y="16" {FONT} font-size="12" font-weight="600" fill="{INK}">{esc(title)}</text>']
    for i in range(5):
        value = top * i // 4
        y = TOP + ph - ph * i / 4
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" stroke="#eaeef2"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" {FONT} font-size="10" fill="{MUTED}" text-anchor="end">{value:,}</text>')
    out.append(f'<line x1="{LEFT}" y1="{TOP + ph}" x2="{W - RIGHT}" y2="{TOP + ph}" stroke="{MUTED}"/>')
    return out


def _slots(n: int) -> tuple[float, float]:
    """(slot width, bar width) for n bars."""
    slot = (W - LEFT - RIGHT) / max(n, 1)
    return slot, max(2.0, min(48.0, slot * 0.7))


def _xlabels(records: Sequence[Any], slot: float) -> list[str]:
    every = max(1, len(records) // 16)
    out = []
    for i, r in enumerate(records):
        if i % every == 0:
            x = LEFT + slot * (i + 0.5)
            out.append(f'<text x="{x:.1f}" y="{H - BOTTOM + 14}" {FONT} font-size="10" fill="{MUTED}" '
                       f'text-anchor="middle">#{r.index}</text>')
    out.append(f'<text x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 6}" {FONT} font-size="10" fill="{MUTED}" '
               f'text-anchor="middle">model call</text>')
    return out


def composition_chart(records: Sequence[Any], palette: Palette | None = None) -> str:
    """Stacked bars: one per call, one segment per composition bucket (same colours as the bars above)."""
    palette = palette or Palette().prime(records)
    top = _nice(max((r.tokens for r in records), default=0))
    out = _frame("Tokens per model call, by part of the context", top, len(records))
    slot, bar = _slots(len(records))
    ph = H - TOP - BOTTOM
    for i, r in enumerate(records):
        x, y = LEFT + slot * i + (slot - bar) / 2, float(TOP + ph)
        for label, tokens, colour in palette.segments(r):
            h = ph * tokens / top
            y -= h
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{colour}">'
                       f'<title>call #{r.index} · {esc(label)}: {tokens:,} tokens</title></rect>')
    out += _xlabels(records, slot)
    return "".join(out) + "</svg>"


def place_compactions(values: Sequence[int], events: Sequence[Any]) -> list[int]:
    """Slot (0..n-1) of the call each compaction ran before: in order, the call whose history size is
    closest to the event's `tokens_after` (compaction runs while that call's prompt is prepared)."""
    out, start = [], 0
    for e in events:
        after = int(getattr(e, "tokens_after", 0) or 0)
        if start >= len(values):
            out.append(max(0, len(values) - 1))
            continue
        j = min(range(start, len(values)), key=lambda k: (abs(values[k] - after), k))
        out.append(j)
        start = j
    return out


def history_chart(records: Sequence[Any], compactions: Sequence[Any] = ()) -> str:
    """History tokens sent with each call; dashed markers where compaction ran, with before → after."""
    values = [history_tokens(r) for r in records]
    budgets = [int(getattr(e, "budget", 0) or 0) for e in compactions]
    befores = [int(getattr(e, "tokens_before", 0) or 0) for e in compactions]
    top = _nice(max(values + budgets + befores + [0]))
    out = _frame("History tokens per model call" + (" (dashed: compaction)" if compactions else ""), top, len(records))
    slot, bar = _slots(len(records))
    ph = H - TOP - BOTTOM
    for i, r in enumerate(records):
        x, y = LEFT + slot * i + (slot - bar) / 2, float(TOP + ph)
        summarised = sum(p.tokens for p in r.parts if p.kind == "history" and p.origin == "summarised")
        for label, tokens, colour in (("summarised", summarised, "#8fb339"), ("raw", values[i] - summarised, "#2da44e")):
            h = ph * tokens / top
            y -= h
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{colour}">'
                       f'<title>call #{r.index}: {tokens:,} {label} history tokens</title></rect>')
    budget = max(budgets, default=0)
    if budget:
        y = TOP + ph - ph * budget / top
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" stroke="#cf222e" stroke-dasharray="2 3"/>'
                   f'<text x="{W - RIGHT - 2}" y="{y - 3:.1f}" {FONT} font-size="10" fill="#cf222e" text-anchor="end">'
                   f'budget {budget:,}</text>')
    for k, (slot_i, e) in enumerate(zip(place_compactions(values, compactions), compactions)):
        x = LEFT + slot * slot_i + 1
        label = f"{int(getattr(e, 'tokens_before', 0)):,} → {int(getattr(e, 'tokens_after', 0)):,}"
        out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + ph}" stroke="#8250df" stroke-width="2" '
                   f'stroke-dasharray="5 3"><title>compaction {k + 1}: {label} tokens</title></line>'
                   f'<text x="{x + 3:.1f}" y="{TOP + 10 + 12 * (k % 3)}" {FONT} font-size="10" fill="#8250df">{label}</text>')
    out += _xlabels(records, slot)
    return "".join(out) + "</svg>"


def as_image(svg: str, alt: str) -> str:
    """The chart as `<img src="data:image/svg+xml;base64,…">`: fixed colours on white, readable in any theme."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (f'<img alt="{esc(alt)}" src="data:image/svg+xml;base64,{data}" width="{W}" height="{H}" '
            f'style="max-width:100%;height:auto;margin:4px 0">')
