"""Small HTML building blocks for the inspector: escaping, `<details>` cards, badges, tables, collapsed text
and token bars. Inline styles only (GitHub strips <style>/<script>); colours are JupyterLab's --jp-* variables with
light fallbacks, so the light and dark themes both read."""
from __future__ import annotations

import html as _html
import re
from types import MappingProxyType
from typing import Iterable, Mapping, Sequence

# short declarations: every saved ask carries them once per element (the budget is ~6 KB per plain ask)
FONT = "font:13px/1.45 system-ui,sans-serif"
MONO = "font:12px ui-monospace,monospace"
# JupyterLab's theme variables with light fallbacks (GitHub, nbviewer, exported HTML): text and panels follow a
# dark theme together, so JupyterLab's own table striping and our text never end up the same shade
INK, MUTED = "var(--jp-content-font-color1,#1f2328)", "var(--jp-content-font-color2,#59636e)"
LINE, PANEL, PAPER = "var(--jp-border-color2,#d1d9e0)", "var(--jp-layout-color2,#f6f8fa)", "var(--jp-layout-color0,#fff)"
# the same in fixed colours, where no page variables reach (SVG images, exported pages)
INK_FIXED, MUTED_FIXED, LINE_FIXED = "#1f2328", "#59636e", "#d1d9e0"

ROLE_COLOURS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "system": ("#ddf4ff", "#0550ae"), "user": ("#dafbe1", "#116329"), "assistant": ("#fbefff", "#6639ba"),
    "tool": ("#fff8c5", "#7d4e00"), "utility": ("#eaeef2", "#424a53"), "error": ("#ffebe9", "#a40e26"),
    "warning": ("#fff8c5", "#7d4e00"), "info": ("#ddf4ff", "#0550ae"), "ok": ("#dafbe1", "#116329"),
})

# Composition buckets: hue families per kind, shades cycle within a family.
FAMILIES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "system": ("#218bff", "#54aeff", "#0969da", "#80ccff", "#0550ae", "#b6e3ff"),
    "raw": ("#2da44e",), "summarised": ("#8fb339",),
    "persistent": ("#e16f24", "#fb8f44", "#bc4c00", "#ffb77c"),
    "temporary": ("#d4a72c", "#eac54f", "#bf8700", "#f5e0a0"),
    "skill": ("#8250df", "#a475f9", "#c297ff"),
    "other": ("#8c959f", "#afb8c1"),
})


def esc(value: object) -> str:
    return _html.escape(str(value), quote=True)


def fmt(n: int | float) -> str:
    return f"{n:,}" if isinstance(n, int) else f"{n:,.1f}"


def root(body: str, title: str = "") -> str:
    """The outer panel every rendering sits in (explicit colours so dark themes keep the contrast)."""
    head = f'<div style="font-weight:600;font-size:14px;margin:0 0 6px 0">{esc(title)}</div>' if title else ""
    return (f'<div style="{FONT};color:{INK};background:{PAPER};border:1px solid {LINE};border-radius:6px;'
            f'padding:10px 12px;margin:6px 0;max-width:1100px">{head}{body}</div>')


def details(summary: str, body: str, open_: bool = False, level: int = 0) -> str:
    """A collapsible card; `summary` is HTML (already escaped). Text colour is inherited from `root` (or from the
    theme inside a widget), so it always matches the theme's background."""
    bg = PANEL if level == 0 else PAPER
    return (f'<details{" open" if open_ else ""} style="border:1px solid {LINE};border-radius:6px;background:{bg};'
            f'margin:6px 0"><summary style="padding:4px 8px">{summary}</summary>'
            f'<div style="padding:2px 10px 6px">{body}</div></details>')


def badge(text: str, kind: str = "utility") -> str:
    bg, fg = ROLE_COLOURS.get(kind, ROLE_COLOURS["utility"])
    return (f'<span style="background:{bg};color:{fg};border-radius:9px;padding:0 6px;font:600 11px sans-serif;'
            f'margin-right:4px">{esc(text)}</span>')


def muted(text: str) -> str:
    return f'<span style="color:{MUTED}">{esc(text)}</span>'


def code(text: str) -> str:
    return f'<code style="{MONO};background:{PANEL};padding:0 3px">{esc(text)}</code>'


def pre(text: str, tint: str = PANEL) -> str:
    return (f'<pre style="{MONO};white-space:pre-wrap;background:{tint};color:inherit;border:1px solid {LINE};'
            f'padding:4px 8px;margin:3px 0;max-height:480px;overflow:auto">{esc(text)}</pre>')


def markdown(text: str) -> str:
    """The agent's answer as rendered Markdown (raw HTML escaped, remote images as links: safe_html.py);
    plain <pre> without mistune."""
    try:
        from a0nb.inspector.safe_html import markdown_html
        body = markdown_html(text)
    except ImportError:
        return pre(text)
    return f'<div style="border:1px solid {LINE};border-radius:4px;padding:2px 10px">{body}</div>'


def collapsed(text: str, short: int = 400, cap: int = 20_000, label: str = "") -> str:
    """Short text as is; long text as a preview line with the full text (up to `cap` characters) inside."""
    if len(text) <= short and text.count("\n") < 12:
        return pre(text)
    shown = text if len(text) <= cap else text[:cap] + f"\n… {len(text) - cap:,} more characters (export the trace for all of it)"
    first = text.strip().splitlines()[0] if text.strip() else ""
    head = f"{esc(label) + ' · ' if label else ''}{esc(first[:90])}{'…' if len(first) > 90 else ''} {muted(f'({len(text):,} characters)')}"
    return details(head, pre(shown), level=1)


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], widths: Sequence[str] = ()) -> str:
    """Rows hold HTML cells (escape before)."""
    th = "".join(f'<th style="text-align:left;padding:3px 8px;border-bottom:2px solid {LINE};color:{MUTED};font-weight:600'
                 f'{";width:" + widths[i] if i < len(widths) and widths[i] else ""}">{esc(h)}</th>'
                 for i, h in enumerate(headers))
    body = "".join(f'<tr style="border-bottom:1px solid {LINE}">' + "".join(
        f'<td style="text-align:left;padding:3px 8px;vertical-align:top;overflow-wrap:anywhere">{c}</td>' for c in row) + "</tr>" for row in rows)
    return (f'<table style="border-collapse:collapse;width:100%;margin:4px 0;color:inherit;background:none">'
            f"<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>")


def kv(pairs: Iterable[tuple[str, str]]) -> str:
    """A compact key/value line: keys muted, values HTML."""
    return " &nbsp;·&nbsp; ".join(f'<span style="color:{MUTED}">{esc(k)}</span> {v}' for k, v in pairs)


def meter(value: int, maximum: int, colour: str = "#2da44e", width: int = 160) -> str:
    """A single proportional bar (e.g. a topic's tokens against the largest topic)."""
    pct = 0.0 if maximum <= 0 else min(100.0, 100.0 * value / maximum)
    return (f'<span style="display:inline-block;width:{width}px;height:8px;background:#eaeef2;border-radius:4px;'
            f'vertical-align:middle;overflow:hidden"><span style="display:block;width:{pct:.1f}%;height:8px;'
            f'background:{colour}"></span></span>')


def stacked_bar(segments: Sequence[tuple[str, int, str]], height: int = 16) -> str:
    """A horizontal stacked bar of (label, tokens, colour), then a legend with counts and shares."""
    total = sum(t for _, t, _ in segments) or 1
    cells = "".join(f'<div title="{esc(lbl)}: {t:,} tokens" style="width:{100 * t / total:.2f}%;background:{c};'
                    f'height:{height}px"></div>' for lbl, t, c in segments if t > 0)
    bar = (f'<div style="display:flex;width:100%;height:{height}px;border-radius:4px;overflow:hidden;'
           f'background:#eaeef2;border:1px solid {LINE}">{cells}</div>')
    legend = "".join(f'<span style="display:inline-block;margin:2px 12px 2px 0;white-space:nowrap">'
                     f'<span style="display:inline-block;width:10px;height:10px;background:{c};border-radius:2px;'
                     f'vertical-align:middle;margin-right:4px"></span>{esc(lbl)} '
                     f'<span style="color:{MUTED}">{t:,} ({100 * t / total:.0f}%)</span></span>'
                     for lbl, t, c in segments)
    return f'<div style="margin:4px 0">{bar}<div style="font-size:12px;margin-top:3px">{legend}</div></div>'


def note(text: str) -> str:
    return f'<div style="color:{MUTED};font-size:12px;margin:6px 0 0 0">{esc(text)}</div>'


def banner(text: str, kind: str = "error") -> str:
    """An error or warning line; `backticked` spans (commands, settings) show as code, not as raw backticks."""
    bg, fg = ROLE_COLOURS.get(kind, ROLE_COLOURS["error"])
    body = _TICKS.sub(r"<code>\1</code>", esc(text))
    return (f'<div style="background:{bg};color:{fg};border:1px solid {fg}55;border-radius:6px;padding:6px 10px;'
            f'margin:6px 0;white-space:pre-wrap">{body}</div>')


_TICKS = re.compile(r"`([^`\n]+)`")


def heading(text: str) -> str:
    return f'<div style="font-weight:600;margin:10px 0 4px 0">{esc(text)}</div>'
