"""The record views: a turn's transcript with its calls and charts, one call with its messages, composition
bar and parts table, and the diff of two calls. Built only from Turn/CallRecord objects, never from live state."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

from a0nb.inspector import html as h
from a0nb.inspector import text as t
from a0nb.inspector.base import PathStyle, Rendering, style_for
from a0nb.inspector.compose import Palette, history_tokens
from a0nb.inspector.diff import Change, diff_calls
from a0nb.inspector.svg import as_image, composition_chart, history_chart, place_compactions

CHART_MIN = 3  # a turn's charts appear from this many model calls on (fewer: the call rows only)
_DATA_URI = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]{64,}")


def volatile(record: Any) -> dict[str, Any]:
    return {"call": record.index, "latency": record.latency, "cost": record.cost, "usage": dict(record.usage)}


def content_text(content: Any) -> str:
    """A message's content as text; inline image data is replaced by its size."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, indent=1)
    return _DATA_URI.sub(lambda m: f"[image data, {len(m.group(0)):,} characters]", text)


def _jsonish(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)


# -- one step of the transcript ---------------------------------------------------------------
def args_block(args: dict[str, Any], style: PathStyle, cap: int, skip: str = "") -> str:
    """Short scalar arguments inline; code and long or structured values as blocks."""
    out = []
    for k, v in args.items():
        if skip == k:
            continue
        value = style(_jsonish(v))
        if isinstance(v, (dict, list)) or "\n" in value or len(value) > 80 or k in ("code", "command"):
            out.append(f'<div style="margin:2px 0">{h.muted(k)}{h.collapsed(value, short=1200, cap=cap)}</div>')
        else:
            out.append(f'<div style="margin:2px 0">{h.muted(k)} {h.code(value)}</div>')
    return "".join(out)


def step_card(c: Any, style: PathStyle, open_: bool = True, cap: int = 20_000) -> str:
    """One chat call as a transcript step: thoughts, headline, tool call with arguments, result."""
    req = c.tool_request or {}
    body = []
    if c.reasoning:
        body.append(h.collapsed(style(c.reasoning), short=0, cap=cap, label="reasoning"))
    thoughts = req.get("thoughts") or ()
    if thoughts:
        body.append('<ul style="margin:2px 0 4px 18px;padding:0">' + "".join(
            f'<li style="color:{h.MUTED}">{h.esc(style(x))}</li>' for x in thoughts) + "</ul>")
    if req:
        body.append(h.badge("tool", "tool") + h.code(req.get("tool_name", "")))
        # the `response` tool's text is the answer, shown once under the steps
        body.append(args_block(req.get("tool_args", {}), style, cap, "text" if req.get("tool_name") == "response" else ""))
        if c.tool_result is not None and c.tool_result != req.get("tool_args", {}).get("text"):
            body.append(h.badge("result", "user") + h.collapsed(style(c.tool_result), short=600, cap=cap, label="result"))
    else:
        why = "the reply held no valid tool request" if t.answered(c) else "the call got no reply"
        body.append(h.banner(why + (f" ({c.error})" if c.error else ""), "warning"))
        if c.response:
            body.append(h.collapsed(style(c.response), short=300, cap=cap, label="reply"))
    if c.error and req:
        body.append(h.banner(style(c.error)))
    for child in c.children:
        body.append(h.muted(f"subordinate agent {child.agent}: call #{child.index} ({child.role}, {child.tokens:,} tokens)") + "<br>")
    title = h.esc(t.one_line(req.get("headline") or ("error" if c.error else "reply"), 80))
    summary = f'{h.badge(f"#{c.index}", "assistant")}<b>{title}</b>' + (f" {h.muted('→ ' + req.get('tool_name', ''))}" if req else "")
    return h.details(summary, "".join(body), open_=open_)


def compaction_card(event: Any, style: PathStyle) -> str:
    reps = getattr(event, "replacements", ())
    rows = [(h.esc(style(r.what)), h.esc(r.by), f"{r.tokens_before:,}", f"{r.tokens_after:,}") for r in reps]
    summary = (h.badge("compaction", "tool") + f"history {event.tokens_before:,} → {event.tokens_after:,} tokens "
               + h.muted(f"(budget {event.budget:,}, {event.mode}, {t.plural(len(reps), 'replacement')})"))
    body = h.table(["what", "replaced by", "tokens before", "after"], rows) if rows else h.muted("no replacements")
    return h.details(summary, body)


def call_row(c: Any, palette: Palette) -> str:
    """One line per call: index, role, tokens, and its composition bar without a legend."""
    segs = palette.segments(c)
    total = sum(x for _, x, _ in segs) or 1
    cells = "".join(f'<div title="{h.esc(lbl)}: {x:,} tokens" style="width:{100 * x / total:.2f}%;background:{col}"></div>'
                    for lbl, x, col in segs if x > 0)
    who = c.role if c.role == "chat" else f"{c.role}: {c.purpose}"
    indent = 18 * c.agent
    return (f'<div style="display:flex;align-items:center;gap:8px;margin:2px 0 2px {indent}px">'
            f'<span style="width:230px;flex:none">{h.badge(f"#{c.index}", "assistant" if c.role == "chat" else "utility")}'
            f'{h.esc(who)} {h.muted(f"{c.tokens:,} tok")}</span>'
            f'<div style="display:flex;flex:1;height:12px;border-radius:3px;overflow:hidden;background:#eaeef2">{cells}</div></div>')


def legend(palette: Palette) -> str:
    return '<div style="font-size:12px;margin:4px 0">' + "".join(
        f'<span style="margin-right:12px;white-space:nowrap"><b style="color:{col}">■</b> {h.esc(lbl)}</span>'
        for lbl, col in palette.assigned.items()) + "</div>"


def _flatten(calls: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for c in calls:
        out.append(c)
        out += _flatten(c.children)
    return out


# -- public views -------------------------------------------------------------------------------
def render_turn(turn: Any, *, agent: Any = None, folder: str | Path | None = None) -> Rendering:
    """The transcript of one turn, its calls with composition bars, and the two charts."""
    style = style_for(agent, folder)
    calls = _flatten(turn.calls)
    main = [c for c in turn.calls if c.role == "chat"]
    parts = [h.badge("user", "user") + h.collapsed(style(turn.message), short=600)]
    for done in getattr(turn, "expansions", None) or ():  # feature completions applied before sending
        parts.append(h.note(style(t.expansion_text(done))))
    if turn.interrupted or turn.error:
        parts.append(h.banner(style(turn.error or "interrupted"), "warning" if turn.interrupted else "error"))
    slots = place_compactions([history_tokens(c) for c in main], turn.compactions) if main else [0] * len(turn.compactions)
    for i, c in enumerate(main or [None]):
        parts += [compaction_card(e, style) for e, slot in zip(turn.compactions, slots) if slot == i]
        if c is not None:
            parts.append(step_card(c, style, open_=len(main) <= 6))
    if turn.text:
        parts.append(h.heading("Answer") + h.markdown(style(turn.text)))
    if any(t.answered(c) for c in calls):  # a turn whose calls never got a reply has nothing to chart
        palette = Palette().prime(calls)
        rows = "".join(call_row(c, palette) for c in calls)
        charts = ""  # with one or two calls the rows say it all; charts show a trend from CHART_MIN calls on
        if len(calls) >= CHART_MIN:
            charts = ('<div style="display:flex;flex-wrap:wrap;gap:8px">'
                      + as_image(composition_chart([c for c in calls if c.agent == 0] or calls, palette),
                                 "Tokens per model call, by part of the context")
                      + as_image(history_chart(main or calls, turn.compactions), "History tokens per model call")
                      + "</div>")
        parts.append(h.details(f"<b>Model calls</b> {h.muted(t.plural(len(calls), 'call') + ' · context composition')}",
                               rows + legend(palette) + charts, open_=True))
    title = f"Turn {turn.index} · {t.status(turn)} · {t.plural(len(turn.calls), 'model call')}"
    meta = {"turn": turn.index, "calls": [volatile(c) for c in calls],
            "latency": sum(c.latency or 0 for c in calls), "cost": sum(c.cost or 0 for c in calls)}
    return Rendering(t.turn_text(turn), h.root("".join(parts), title), meta)


def message_block(i: int, m: dict[str, Any], style: PathStyle, cap: int) -> str:
    role = str(m.get("role", "?"))
    text = style(content_text(m.get("content", "")))
    head = f'{h.badge(role, role)}{h.muted(f"message {i} · {len(text):,} characters")}'
    if len(text) <= 500 and text.count("\n") < 10:
        return f'<div style="margin:6px 0">{head}{h.pre(text)}</div>'
    first = t.one_line(text.strip().splitlines()[0] if text.strip() else "", 80)
    return h.details(f"{head} {h.esc(first)}", h.pre(text if len(text) <= cap else text[:cap] + f"\n… {len(text) - cap:,} more characters"))


def parts_table(parts: Sequence[Any], style: PathStyle, group_over: int = 200, since: int = 0) -> str:
    kinds = {"system": "system", "raw": "user", "summarised": "tool", "reattached": "assistant", "temporary": "warning",
             "persistent": "tool"}
    rows = []
    for label, tokens, where, source, origin, overrode in t.part_rows(parts, group_over, since):
        src = h.esc(style(source))
        if overrode:
            src += "<br>" + h.muted("overrode " + ", ".join(style.many(overrode)))
        rows.append((h.esc(label), f"{tokens:,}", where, src, h.badge(origin, kinds.get(origin, "utility"))))
    return h.table(["part", "tokens", "where", "source / provenance", "origin"], rows, ("", "70px", "80px", "", "100px"))


def render_call(record: Any, *, agent: Any = None, folder: str | Path | None = None, cap: int = 20_000,
                messages_limit: int | None = None, group_over: int = 200) -> Rendering:
    """One model call: what went in (messages, composition, parts with provenance) and what came out."""
    style = style_for(agent, folder)
    r = record
    usage = ", ".join(f"{k} {v:,}" for k, v in r.usage.items() if isinstance(v, int)) or "—"
    info = h.kv([("role", h.esc(r.role if r.role == "chat" else f"{r.role} ({r.purpose})")), ("turn", str(r.turn)),
                 ("pass", str(r.iteration)), ("agent", str(r.agent)), ("messages", str(len(r.messages))),
                 ("estimated tokens", f"{r.tokens:,}"), ("provider usage", h.esc(usage)),
                 ("provider extensions", h.esc(", ".join(r.provider_extensions)) or h.muted("—"))]
                + ([("reply metadata", h.code(_jsonish(r.metadata)))] if getattr(r, "metadata", None) else []))
    body = [info, h.heading("Context composition"), h.stacked_bar(Palette().segments(r))]
    if r.error:
        body.insert(0, h.banner(style(r.error)))
    first = 0 if messages_limit is None else max(0, len(r.messages) - messages_limit)
    shown = "".join(message_block(i, r.messages[i], style, cap) for i in range(first, len(r.messages)))
    if first:
        shown = h.note(f"{first:,} earlier messages are not shown here; export_trace() has them all") + shown
    body.append(h.details(f"<b>Messages</b> {h.muted(t.plural(len(r.messages), 'message'))}", shown, open_=True))
    body.append(h.details(f"<b>Parts</b> {h.muted(t.plural(len(r.parts), 'part') + ' with provenance')}",
                          parts_table(r.parts, style, group_over, first), open_=True))
    out = []
    if r.reasoning:
        out.append(h.collapsed(style(r.reasoning), short=0, cap=cap, label="reasoning"))
    if r.response:
        out.append(h.badge("response", "assistant") + h.collapsed(style(r.response), short=800, cap=cap))
    if r.tool_request:
        out.append(h.badge("tool request", "tool") + h.pre(style(_jsonish(r.tool_request))))
    if r.tool_result is not None:
        out.append(h.badge("tool result", "user") + h.collapsed(style(r.tool_result), short=600, cap=cap))
    if out:
        body.append(h.details("<b>Reply</b>", "".join(out), open_=True))
    if r.diagnostics:
        body.append(h.heading("Diagnostics") + "".join(h.banner(style(d), "warning") for d in r.diagnostics))
    if r.children:
        body.append(h.heading("Subordinate calls") + "".join(
            f"<div>{h.badge(f'#{c.index}', 'assistant')}agent {c.agent} · {h.esc(c.role)} · {c.tokens:,} tokens</div>"
            for c in r.children))
    title = f"Call #{r.index} · {r.role} · {r.model or 'no model'}"
    return Rendering(t.call_text(r, style), h.root("".join(body), title), volatile(r))


def _change_row(c: Change, sign: str, style: PathStyle) -> str:
    part = c.new or c.old
    colour = {"+": "#116329", "-": "#a40e26", "~": "#7d4e00"}[sign]
    delta = f"{c.tokens_delta:+,} tokens"
    head = f'<span style="{h.MONO};color:{colour};font-weight:700">{sign}</span> {h.esc(c.label)} {h.muted(delta)}'
    if sign == "~":
        return h.details(head, diff_block(c.diff, style), level=1)
    return h.details(head, h.muted(style(part.source)) + h.pre(style(part.text)[:4000]), level=1)


def diff_block(lines: Sequence[str], style: PathStyle) -> str:
    colours = {"+": ("#dafbe1", "#116329"), "-": ("#ffebe9", "#a40e26"), "@": ("#ddf4ff", "#0550ae")}
    out = []
    for line in lines:
        bg, fg = colours.get(line[:1], (h.PAPER, h.INK))
        if line.startswith(("+++", "---")):
            bg, fg = h.PANEL, h.MUTED
        out.append(f'<div style="background:{bg};color:{fg};white-space:pre-wrap;word-break:break-word">{h.esc(style(line)) or "&nbsp;"}</div>')
    return f'<div style="{h.MONO};border:1px solid {h.LINE};border-radius:4px;padding:4px 0;margin:4px 0">{"".join(out)}</div>'


def render_diff(a: Any, b: Any, *, agent: Any = None, folder: str | Path | None = None) -> Rendering:
    """Call `b` against call `a`: parts that appeared, vanished or changed, with unified diffs."""
    style = style_for(agent, folder)
    d = diff_calls(a, b)
    body = [h.kv([("messages", f"{len(a.messages)} → {len(b.messages)} ({d.messages_delta:+d})"),
                  ("tokens", f"{a.tokens:,} → {b.tokens:,} ({d.tokens_delta:+,})"),
                  ("unchanged parts", str(d.unchanged))])]
    for title, changes, sign in (("Appeared", d.appeared, "+"), ("Vanished", d.vanished, "-"), ("Changed", d.changed, "~")):
        if changes:
            body.append(h.heading(f"{title} ({len(changes)})") + "".join(_change_row(c, sign, style) for c in changes))
    if d.empty:
        body.append(h.note("The two calls sent the same parts."))
    meta = {"a": volatile(a), "b": volatile(b)}
    return Rendering(t.diff_text(d), h.root("".join(body), f"Call #{b.index} against call #{a.index}"), meta)
