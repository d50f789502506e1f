"""Deterministic text/plain summaries of turns, calls and diffs (what nbval compares and a terminal shows):
short, no timings, ids or costs."""
from __future__ import annotations

import json
from typing import Any, Callable, NamedTuple, Sequence

from a0nb.inspector.compose import family
from a0nb.inspector.diff import CallDiff

MAX_LINES = 12


def one_line(value: object, width: int = 90) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def args_text(args: dict[str, Any], width: int = 70) -> str:
    return one_line(", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items()), width)


def status(turn: Any) -> str:
    return "interrupted" if turn.interrupted else ("error" if turn.error else "ok")


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def limit(lines: list[str], head: int = 1) -> list[str]:
    """Keep the summary short: the first lines, then a count of the rest."""
    if len(lines) <= MAX_LINES:
        return lines
    return lines[: MAX_LINES - 1] + [f"  … {len(lines) - MAX_LINES + 1} more"]


def kinds_line(record: Any) -> str:
    totals: dict[str, int] = {}
    for bucket, tokens in record.composition().items():
        fam = family(bucket)
        name = {"raw": "history", "summarised": "summarised history", "persistent": "extras",
                "temporary": "extras", "skill": "skills"}.get(fam, fam)
        totals[name] = totals.get(name, 0) + tokens
    return " · ".join(f"{k} {v:,}" for k, v in totals.items())


def answered(record: Any) -> bool:
    """The call reached a model and came back with something (a reply, reasoning, usage or a tool request)."""
    return bool(record.response or record.reasoning or record.usage or record.tool_request)


def no_request(record: Any) -> str:
    """Why a chat call has no tool request: its error, no reply at all, or a reply without a valid request."""
    if record.error:
        return f"error: {one_line(record.error, 60)}"
    return "no reply" if not answered(record) else "no valid tool request"


def turn_text(turn: Any) -> str:
    chat = [c for c in turn.calls if c.role == "chat"]
    head = (f"Turn {turn.index} · {status(turn)} · {plural(len(turn.calls), 'model call')} · "
            f"{plural(len(turn.steps), 'step')}" + (f" · {plural(len(turn.compactions), 'compaction')}" if turn.compactions else ""))
    lines = [head, f"  user: {one_line(turn.message, 80)}"]
    lines += [f"  {expansion_text(done)}" for done in getattr(turn, "expansions", None) or ()]
    for c in chat:
        req = c.tool_request
        if req:
            lines.append(f"  #{c.index} {one_line(req.get('headline', ''), 40)} → {req.get('tool_name', '')}"
                         f"({args_text(req.get('tool_args', {}), 50)})")
        else:
            lines.append(f"  #{c.index} {no_request(c)}")
    lines = limit(lines)
    if turn.error:
        lines.append(f"error: {one_line(turn.error, 100)}")
    if turn.text:
        lines.append(f"answer: {one_line(turn.text, 100)}")
    return "\n".join(lines)


def expansion_text(done: dict[str, Any]) -> str:
    """`expanded '@tag:important' → '[tagged:important] ' by MarkerFeature (features/marker.py)`."""
    return (f"expanded {one_line(str(done.get('replacement', '')), 40)!r} → {one_line(str(done.get('snippet', '')), 60)!r}"
            f" by {done.get('feature', '?')} ({'/'.join(str(done.get('path') or 'registered').split('/')[-2:])})")


def call_text(record: Any, style: Callable[[object], str] = str) -> str:
    who = f"{record.role}" + (f" ({record.purpose})" if record.role != "chat" else "")
    lines = [f"Call #{record.index} · {who} · {record.model or 'no model'} · {plural(len(record.messages), 'message')}"
             f" · {plural(len(record.parts), 'part')} · {record.tokens:,} tokens",
             f"  {kinds_line(record)}"]
    if record.tool_request:
        lines.append(f"  → {record.tool_request.get('tool_name', '')}({args_text(record.tool_request.get('tool_args', {}))})")
    elif record.response:
        lines.append(f"  reply: {one_line(record.response, 80)}")
    if record.error:
        lines.append(f"  error: {one_line(record.error, 90)}")
    return "\n".join(lines + provenance_lines(record, style))


def provenance_lines(record: Any, style: Callable[[object], str] = str) -> list[str]:
    """Every part with where it came from (prompt files and their roots, the extension file, the skill, raw or
    summarised history), paths shown relative to stable roots, so a text diff catches a provenance change."""
    lines = ["  parts:"]
    for label, tokens, where, source, origin, overrode in part_rows(record.parts, group_over=0):
        line = f"    {label} · {tokens:,} tok · {style(source) or origin}"
        if overrode:
            line += " · overrode " + ", ".join(style(o) for o in overrode)
        lines.append(line)
    return lines if len(lines) > 1 else []


class _Early(NamedTuple):
    """The row standing for the history parts before `since` (part_rows)."""
    label: str
    tokens: int
    where: str
    source: str
    origin: str
    kind: str = "early"


def part_rows(parts: Sequence[Any], group_over: int, since: int = 0) -> list[tuple[str, int, str, str, str, tuple[str, ...]]]:
    """(label, tokens, where, source, origin, overrode) per part; with more than `group_over` history parts,
    consecutive history parts of one topic or bulk become one row; history parts of messages before `since`
    become one row, first (a rendering that shows only the newest messages)."""
    rows: list[tuple[str, int, str, str, str, tuple[str, ...]]] = []
    early = [p for p in parts if p.kind == "history" and p.message_index < since] if since else []
    if early:  # one row, where the first of them was
        origins = "/".join(sorted({p.origin for p in early}))
        first = parts.index(early[0])
        parts = [p for p in parts if not (p.kind == "history" and p.message_index < since)]
        parts.insert(first, _Early(f"history before message {since:,} ({plural(len(early), 'part')})",
                                   sum(p.tokens for p in early), f"msg {early[0].message_index}–{early[-1].message_index}",
                                   f"{origins} history", origins))
    history = sum(1 for p in parts if p.kind == "history")
    run: list[Any] = []

    def close() -> None:
        if run:
            origins = "/".join(sorted({p.origin for p in run}))
            where = run[0].label.split(": ", 1)[-1].split(" (")[0]
            span = f"msg {run[0].message_index}–{run[-1].message_index}"
            rows.append((f"history: {where} ({plural(len(run), 'part')})", sum(p.tokens for p in run), span,
                         f"{origins} {where}", origins, ()))
            run.clear()
    for p in parts:
        if p.kind == "history" and history > group_over:
            if run and run[0].label.split(" (")[0] != p.label.split(" (")[0]:
                close()
            run.append(p)
            continue
        close()
        if isinstance(p, _Early):
            rows.append((p.label, p.tokens, p.where, p.source, p.origin, ()))
            continue
        rows.append((p.label, p.tokens, f"msg {p.message_index}", p.source, p.origin or p.kind, p.overrode))
    close()
    return rows




def diff_text(d: CallDiff) -> str:
    head = (f"Call #{d.b.index} vs #{d.a.index}: {d.messages_delta:+d} messages, {d.tokens_delta:+,} tokens; "
            f"{len(d.appeared)} appeared, {len(d.vanished)} vanished, {len(d.changed)} changed, {d.unchanged} unchanged")
    lines = [head]
    lines += [f"  + {c.label} ({c.new.tokens:,})" for c in d.appeared]
    lines += [f"  - {c.label} ({c.old.tokens:,})" for c in d.vanished]
    lines += [f"  ~ {c.label} ({c.tokens_delta:+,})" for c in d.changed]
    return "\n".join(limit(lines))
