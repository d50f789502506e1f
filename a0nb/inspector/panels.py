"""The agent views: system prompt with per-section provenance, extras, history, skills, tools, extensions,
search paths and diagnostics. Prompt and extras are read from the last chat call's record, not rebuilt."""
from __future__ import annotations

from typing import Any

from a0nb.inspector import html as h
from a0nb.inspector import text as t
from a0nb.inspector.base import PathStyle, Rendering
from a0nb.inspector.views import compaction_card, content_text


def last_chat(agent: Any) -> Any:
    return next((c for c in reversed(agent.calls) if c.role == "chat"), None)


def _simple(title: str, lines: list[str], body: str, meta: dict[str, Any] | None = None) -> Rendering:
    return Rendering("\n".join(t.limit(lines)), h.root(body, title), meta or {})


def _no_calls(title: str) -> Rendering:
    return _simple(title, [f"{title}: no calls yet"], h.note("No model calls yet: ask the agent something first."))


def render_prompt(agent: Any) -> Rendering:
    """The system prompt of the last chat call, section by section, with files, roots, extension, overrides."""
    c, style = last_chat(agent), PathStyle.for_agent(agent)
    if c is None:
        return _no_calls("System prompt")
    system = [p for p in c.parts if p.kind == "system"]
    lines = [f"System prompt of call #{c.index}: {t.plural(len(system), 'section')}, {sum(p.tokens for p in system):,} tokens"]
    cards = []
    for p in system:
        lines.append(f"  {p.label.split(': ', 1)[-1]} · {p.tokens:,} tokens · {p.extension or 'no extension'}")
        rows = [("extension", h.code(p.extension) if p.extension else h.muted("—")),
                ("files", "<br>".join(h.esc(style(f)) for f in p.files) or h.muted("—"))]
        if p.overrode:
            rows.append(("overrode", "<br>".join(h.esc(x) for x in style.many(p.overrode))))
        table = h.table(["", ""], [(h.muted(k), v) for k, v in rows], ("110px", ""))
        summary = f"{h.badge('system', 'system')}<b>{h.esc(p.label.split(': ', 1)[-1])}</b> {h.muted(f'{p.tokens:,} tokens')}"
        cards.append(h.details(summary, h.muted(style(p.source)) + table + h.collapsed(style(p.text), short=0, label="text")))
    return _simple("System prompt", lines, "".join(cards) or h.note("The last call had no system sections."), {"call": c.index})


def render_extras(agent: Any) -> Rendering:
    """Each extras key of the last chat call: value, the hook that set it, persistent or temporary."""
    c, style = last_chat(agent), PathStyle.for_agent(agent)
    if c is None:
        return _no_calls("Extras")
    extras = [p for p in c.parts if p.kind == "extras"]
    lines = [f"Extras of call #{c.index}: {t.plural(len(extras), 'key')}"]
    rows = []
    for p in extras:
        key = p.label.split(": ", 1)[-1]
        lines.append(f"  {key} ({p.origin}) ← {p.extension or 'outside an extension'}")
        rows.append((h.code(key), h.collapsed(style(p.text), short=300), h.esc(style(p.source)),
                     h.badge(p.origin, "tool" if p.origin == "persistent" else "warning"), f"{p.tokens:,}"))
    body = h.table(["key", "value", "set by", "kind", "tokens"], rows, ("18%", "34%", "31%", "11%", "6%")) if rows \
        else h.note("The last call carried no extras.")
    return _simple("Extras", lines, body, {"call": c.index})


def _topic_row(name: str, record: Any, counter: Any, biggest: int, style: PathStyle, show: int) -> tuple[str, str, int]:
    """Summary and body of one bulk or topic; bodies only for its newest `show` messages."""
    tokens = record.tokens(counter)
    messages = record.all_messages()
    state = "summarised" if getattr(record, "summary", None) is not None else "raw"
    colour = "#8fb339" if state == "summarised" else "#2da44e"
    count = t.plural(len(messages), "message")
    summary = (f"{h.badge(name, 'user' if state == 'raw' else 'tool')}{h.meter(tokens, biggest, colour)} "
               f"{h.muted(f'{tokens:,} tokens · {count} · {state}')}")
    if state == "summarised":
        return summary, h.collapsed(style(record.summary), short=600, label="summary"), tokens
    shown = messages[len(messages) - show:] if show > 0 else []
    body = "".join(f'<div style="margin:3px 0">{h.badge(m.role, "assistant" if m.ai else "user")}'
                   f'{h.muted(f"{m.id} · {m.kind} · {m.tokens(counter):,} tokens")}'
                   f'{h.collapsed(style(content_text(m.output_content())), short=300)}</div>' for m in shown)
    if len(shown) < len(messages):
        body = h.note(f"{len(messages) - len(shown):,} older messages of this topic are not shown "
                      "(render_history(agent, messages_limit=...) shows more)") + body
    return summary, body, tokens


def render_history(agent: Any, messages_limit: int = 300, topics_limit: int | None = None) -> Rendering:
    """Bulks and topics with token bars (message bodies for the newest `messages_limit` messages, cards for
    the newest `topics_limit` topics); the compaction events of the agent's turns as before → after."""
    hist, style = agent.history, PathStyle.for_agent(agent)
    counter = agent.shared.counter
    records = [(f"bulk {i}", b) for i, b in enumerate(hist.bulks, 1)] + \
              [(f"topic {i}", tp) for i, tp in enumerate(hist.topics, 1)] + [("current topic", hist.current)]
    biggest = max((r.tokens(counter) for _, r in records), default=0)
    total = hist.tokens(counter)
    lines = [f"History: {t.plural(len(hist.bulks), 'bulk')}, {t.plural(len(hist.topics), 'sealed topic')}, "
             f"{t.plural(len(hist.messages()), 'message')}, {total:,} tokens"]
    budget, shows = messages_limit, []
    for _, rec in reversed(records):
        n = len(rec.all_messages()) if getattr(rec, "summary", None) is None else 0
        shows.append(min(n, budget))
        budget -= shows[-1]
    cards, first = [], 0
    if topics_limit is not None and len(records) > topics_limit:
        first = len(records) - topics_limit
        older = sum(r.tokens(counter) for _, r in records[:first])
        cards.append(h.note(f"{first:,} older bulks and topics ({older:,} tokens) are not listed here; "
                            "render_history(agent) lists them all"))
    for (name, rec), show in list(zip(records, reversed(shows)))[first:]:
        summary, body, tokens = _topic_row(name, rec, counter, biggest, style, show)
        lines.append(f"  {name}: {tokens:,} tokens")
        cards.append(h.details(summary, body, open_=name == "current topic" and len(rec.all_messages()) <= 20))
    events = [(turn.index, e) for turn in agent.turns for e in turn.compactions]
    if events:
        lines.append(f"  {t.plural(len(events), 'compaction')}")
        cards.append(h.heading("Compactions") + "".join(
            h.muted(f"turn {i}") + compaction_card(e, style) for i, e in events))
    problems = hist.validate()
    if problems:
        cards.append(h.heading("Consistency problems") + "".join(h.banner(p, "warning") for p in problems))
    return _simple("History", lines, "".join(cards))


def render_skills(agent: Any) -> Rendering:
    """Available skills with their root; the loaded ledger; recalled (extras) and reattached skills of the last call."""
    style = PathStyle.for_agent(agent)
    skills, loaded = agent.skills(), list(agent.loaded_skills())
    c = last_chat(agent)
    recalled = next((p for p in (c.parts if c else ()) if p.kind == "extras" and p.label.endswith(": relevant_skills")), None)
    reattached = [p for p in (c.parts if c else ()) if p.kind == "skill"]
    lines = [f"Skills: {len(skills)} available, {len(loaded)} loaded, {len(reattached)} reattached"]
    rows = [(h.code(name) + (" " + h.badge("loaded", "ok") if name in loaded else ""), h.esc(s.root_label),
             h.esc(t.one_line(s.description, 160)), h.muted(style(s.path))) for name, s in sorted(skills.items())]
    body = [h.heading("Available"), h.table(["skill", "root", "description", "file"], rows, ("170px", "100px", "", ""))
            if rows else h.note("No skills found in any skills/ folder.")]
    body.append(h.heading("Loaded (oldest first)") + (h.esc(", ".join(loaded)) if loaded else h.muted("none")))
    if recalled is not None:
        body.append(h.heading(f"Recalled for call #{c.index} (extras relevant_skills)") + h.pre(style(recalled.text)))
    if reattached:
        used = sum(p.tokens for p in reattached)
        body.append(h.heading(f"Reattached after compaction in call #{c.index} · {used:,} tokens") + h.table(
            ["skill", "tokens", "source"], [(h.esc(p.label.split(': ', 1)[-1]), f"{p.tokens:,}", h.esc(style(p.source)))
                                            for p in reattached]))
        lines.append(f"  reattached: {', '.join(p.label.split(': ', 1)[-1] for p in reattached)} ({used:,} tokens)")
    if loaded:
        lines.append(f"  loaded: {', '.join(loaded)}")
    return _simple("Skills", lines, "".join(body))


def render_tools(agent: Any, name: str | None = None) -> Rendering:
    """Each tool: kind, the root it came from, the lower copies it overrode, its description; with `name`, that
    tool and its DOX companion (`tools/<tool>.py.dox.md`: purpose, arguments, output, side effects)."""
    if name:
        return render_tool(agent, name)
    style = PathStyle.for_agent(agent)
    tools = agent.tools.available()
    lines = [f"Tools: {len(tools)}"] + [f"  {n} ({i.kind}, {i.root_label})" for n, i in sorted(tools.items())]
    rows = [(h.code(n), h.esc(i.kind), h.esc(i.root_label) + (f"<br>{h.muted(style(i.path))}" if i.path else ""),
             "<br>".join(h.esc(x) for x in style.many(i.overrode)) or h.muted("—"), h.esc(t.one_line(i.description, 200)))
            for n, i in sorted(tools.items())]
    return _simple("Tools", lines, h.table(["tool", "kind", "root", "overrode", "description"], rows,
                                          ("150px", "70px", "", "", "")))


def render_tool(agent: Any, name: str) -> Rendering:
    style = PathStyle.for_agent(agent)
    info = agent.tools.resolve(name)
    if info is None:
        return _simple(f"Tool {name}", [f"Tool {name}: not found"], h.note(f"No tool named {name!r} in the hierarchy."))
    dox = info.path.with_name(info.path.name + ".dox.md") if info.path else None
    doc = dox.read_text(encoding="utf-8") if dox is not None and dox.is_file() else ""
    where = style(info.path) if info.path else info.root_label
    lines = [f"Tool {info.name} ({info.kind}, {info.root_label}): {where}", info.description or "(no description)"]
    lines += doc.splitlines() if doc else [f"no DOX companion ({info.path.name if info.path else name}.dox.md)"]
    body = h.muted(h.esc(where)) + h.pre(doc) if doc else h.note("No DOX companion file next to this tool.")
    return _simple(f"Tool {info.name}", lines, body)


def render_extensions(agent: Any, point: str | None = None) -> Rendering:
    """Every extension point in catalogue order with its resolved extensions (file, root, what it overrode)."""
    from a0nb.files.points import POINTS
    style = PathStyle.for_agent(agent)
    names = [point] if point else list(POINTS)
    lines, cards = [f"Extensions at {point}" if point else f"Extensions: {len(names)} points"], []
    for name in names:
        infos = agent.extensions.resolve(name)
        doc = POINTS[name].doc if name in POINTS else ""
        if infos or point:
            lines.append(f"  {name}: {', '.join(i.name for i in infos) or '—'}")
        rows = [(h.code(i.name), h.esc(i.root_label) + (f"<br>{h.muted(style(i.path))}" if i.path else ""),
                 "<br>".join(h.esc(x) for x in style.many(i.overrode)) or h.muted("—")) for i in infos]
        summary = f"<b>{h.esc(name)}</b> {h.muted(t.plural(len(infos), 'extension'))}"
        body = h.muted(doc) + (h.table(["extension", "root", "overrode"], rows, ("220px", "", "")) if rows else "")
        cards.append(h.details(summary, body, open_=bool(point)))
    if point is None:
        cards.append(_provider_extensions_card(agent, style, lines))
    return _simple("Extensions", lines, "".join(cards))


def _provider_extensions_card(agent: Any, style: PathStyle, lines: list[str]) -> str:
    """`providers/*.py` extensions: where each came from, what gates it, and whether the chat model uses it."""
    found = agent.provider_extensions()
    active = _active_provider_extensions(agent)
    lines.append(f"  provider extensions: {', '.join(e.name for e in found) or '—'}")

    def gate(e: Any) -> str:
        x = e.extension
        bits = ([f"providers: {', '.join(x.providers)}"] if x.providers else []) + \
            ([f"needs tags: {', '.join(sorted(x.required_tags))}"] if x.required_tags else []) + \
            ([f"not with tags: {', '.join(sorted(x.forbidden_tags))}"] if x.forbidden_tags else [])
        return h.esc("; ".join(bits)) or h.muted("any provider")

    def status(e: Any) -> str:
        if active is None:
            return h.muted("no model")
        return h.badge("active", "ok") if e.name in active else h.muted("not for this model")

    rows = [(h.code(e.name), h.esc(e.root_label) + (f"<br>{h.muted(style(e.path))}" if e.path else ""),
             "<br>".join(h.esc(x) for x in style.many(e.overrode)) or h.muted("—"), gate(e), status(e)) for e in found]
    summary = f"<b>provider extensions</b> {h.muted(t.plural(len(found), 'extension'))}"
    body = h.muted("Classes in providers/*.py that add reasoning, native tool calls and more to model providers; "
                   "the same file name in a higher root wins.")
    if rows:
        body += h.table(["extension", "root", "overrode", "applies to", "chat model"], rows, ("220px", "", "", "", "90px"))
    return h.details(summary, body)


def _active_provider_extensions(agent: Any) -> list[str] | None:
    from a0nb.errors import A0Error
    from a0nb.providers.extension import provider_tags
    try:
        provider, config = agent.provider("chat"), agent.model_config("chat")
    except (A0Error, ValueError):
        return None
    tags = provider_tags(provider, config)
    return [e.name for e in agent.provider_extensions() if e.applies(provider, config, tags)]


def render_paths(agent: Any) -> Rendering:
    """The search hierarchy, highest priority first; absolute paths go to metadata."""
    style, roots = PathStyle.for_agent(agent), agent.paths
    lines = [f"Search paths (profile {agent.profile}), highest priority first:"]
    rows = []
    for i, r in enumerate(roots, 1):
        exists = r.path.is_dir()
        lines.append(f"  {i:2d}. {r.label:<24} {style(r.path)}{'' if exists else '  (missing)'}")
        rows.append((str(i), h.esc(r.label), h.code(style(r.path)), h.badge("present", "ok") if exists else h.muted("missing")))
    body = h.table(["#", "root", "folder", ""], rows, ("30px", "170px", "", "80px")) + h.note(
        "Folders are shown relative to the notebook folder (.); <a0nb> is the bundled defaults, $A0NB_HOME the user folder.")
    return _simple("Search paths", lines, body, {"paths": [str(r.path) for r in roots]})


def render_diagnostics(agent: Any) -> Rendering:
    """Every load or render problem with the file, line, reason and fix."""
    style = PathStyle.for_agent(agent)
    items = list(agent.diagnostics)
    lines = [f"Diagnostics: {len(items)}"] + [f"  {d.severity}: {style(d.path or '<a0nb>')}"
                                                f"{':' + str(d.line) if d.line else ''}: {t.one_line(style(d.message), 80)}"
                                                for d in items]
    rows = [(h.badge(d.severity, d.severity), h.esc(d.area),
             h.code(style(d.path)) + (f":{d.line}" if d.line else "") if d.path else h.muted("—"),
             h.esc(style(d.message)) + (f"<br>{h.muted('fix: ' + style(d.fix))}" if d.fix else "")) for d in items]
    body = h.table(["severity", "area", "where", "problem"], rows, ("80px", "90px", "", "")) if rows \
        else h.note("No diagnostics: every prompt, extension, tool and skill loaded cleanly.")
    return _simple("Diagnostics", lines, body)
