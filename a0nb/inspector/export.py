"""Trace export: one self-contained HTML document (every turn, every call, the diff of consecutive calls)
or JSONL call records (with subordinate calls nested) that `a0nb.engine.records.import_jsonl` reads back."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from a0nb.atomic_io import write_text
from a0nb.errors import A0Error
from a0nb.engine.records import export_jsonl
from a0nb.inspector import html as h
from a0nb.inspector.views import render_call, render_diff, render_turn


def _calls_html(calls: list[Any], agent: Any) -> str:
    out, previous = [], None
    for c in calls:
        out.append(f'<div id="call-{c.index}"></div>' + render_call(c, agent=agent).html)
        timing = ", ".join(f"{k} {v}" for k, v in (("latency s", c.latency), ("cost", c.cost)) if v is not None)
        if timing:
            out.append(h.note(f"call #{c.index}: {timing}"))
        if previous is not None and c.role == "chat" and previous.role == "chat" and previous.agent == c.agent:
            out.append(render_diff(previous, c, agent=agent).html)
        if c.role == "chat":
            previous = c
        out.append(_calls_html(list(c.children), agent) if c.children else "")
    return "".join(out)


def trace_html(agent: Any) -> str:
    sections = []
    turns = {t.index: t for t in agent.turns}
    loose = [c for c in agent.calls if c.turn not in turns]
    for turn in agent.turns:
        sections.append(f'<h2 style="{h.FONT};font-size:18px">Turn {turn.index}</h2>' + render_turn(turn, agent=agent).html)
        sections.append(h.details(f"<b>Calls of turn {turn.index}</b>", _calls_html(turn.calls, agent)))
    if loose:
        sections.append(h.details("<b>Calls outside a turn</b>", _calls_html(loose, agent)))
    body = "".join(sections) or h.note("No turns yet.")
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>a0nb trace</title></head>'
            f'<body style="margin:16px;background:#ffffff;color:{h.INK};{h.FONT}">'
            f'<h1 style="font-size:20px">a0nb trace · {len(agent.turns)} turns · {len(agent.calls)} calls</h1>'
            f"{body}</body></html>")


def export_trace(agent: Any, path: str | Path) -> Path:
    """Write the agent's trace: `.html` (self-contained, no JS) or `.jsonl` (call records)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        return write_text(path, trace_html(agent), "trace")
    if suffix == ".jsonl":
        return export_jsonl(agent.calls, path)
    raise A0Error(f"cannot export a trace to {path.name!r}: use a file name ending in .html or .jsonl")
