"""Live widgets while a turn runs: a transcript that streams reasoning, response and tool progress (coalesced to
≤ 20 updates/s) and a tabbed inspector; `finish()` swaps both for the static `render_turn`. Everything is pushed
from the kernel as it happens: the Calls tab gains one card per completed call the moment it is recorded, so it
reads even while the agent's Python code holds the kernel's main thread (the other tabs build when opened)."""
from __future__ import annotations

import json
import uuid
from typing import Any, Callable

from a0nb.inspector import html as h
from a0nb.inspector.base import PathStyle, Rendering
from a0nb.inspector.live_css import SCOPE, LiveStyles
from a0nb.inspector.panels import render_extras, render_history, render_prompt, render_skills, render_tools
from a0nb.inspector.search import render_search
from a0nb.inspector.throttle import DisplaySink, IPythonDisplay, Throttle
from a0nb.inspector.views import render_call, render_diff, render_turn, step_card

TABS = ("Prompt", "Extras", "History", "Skills", "Tools", "Calls", "Diff", "Search")
TAIL = 500            # streamed text shown live: the newest characters only, so each update stays small
CAP = 2000            # per-field cap inside live step cards; the static rendering has everything
MESSAGES = 6          # the newest messages on a live call card (and their history parts; earlier ones in one row)
STEP = 40_000         # every STEP characters sent during one call, the update interval grows by the base interval
BUDGET = 180_000      # characters one call may send while streaming; then the stream waits for the step card
PAUSED = h.note("… still streaming; the display waits for the end of this call to stay light.")


class LiveTurn:
    """`LiveTurn(agent).start()`, then `agent.ask(...)`, then `.finish(turn)` (or use it as a context manager)."""

    def __init__(self, agent: Any, *, display: DisplaySink | None = None, interval: float = 0.05) -> None:
        self.agent = agent
        self.display_id = f"a0nb-live-{uuid.uuid4().hex[:12]}"
        self.sink = display or IPythonDisplay()
        self.throttle = Throttle(self._apply, interval)
        self.interval = interval
        self.call_sent = 0            # characters sent for the streaming of the current call
        self.style = PathStyle.for_agent(agent)
        self.sent = 0                 # characters assigned to widget traits (what the kernel sends)
        self.css = LiveStyles()       # inline styles as classes (the live view is never saved)
        self.view: Any = None
        self._widgets: list[Any] = []
        self._registered: list[tuple[str, str]] = []
        self._cards: dict[int, Any] = {}   # call index -> its card in the Calls tab
        self._stream: dict[str, str] = {}
        self._tool_head = self._tool_args = ""
        self._picking = False
        self._finished = False

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> "LiveTurn":
        import ipywidgets as w
        self.sheets = self._new(w.VBox, layout=w.Layout(display="none"))  # the classes' rules (live_css.py)
        self.status = self._new(w.HTML, value=self._html(self._status_html("running")))
        self.steps = self._new(w.VBox)
        self.stream = self._new(w.HTML)
        self.tool = self._new(w.HTML)
        self.tool.add_class("a0-live-tool")
        self.panes = [self._new(w.HTML, value=h.note("Open the tab to load it.")) for _ in TABS]
        self.picker = {"Diff": self._new(w.Dropdown, options=[], description="call")}
        self.query = self._new(w.Text, placeholder="a phrase from the answer (Enter)", description="search",
                               continuous_update=False)
        self.query.observe(lambda change: self._open(TABS.index("Search")), names="value")
        self.calls = self._new(w.VBox)
        self.calls.add_class("a0-live-calls")
        self.panes[TABS.index("Calls")] = self.calls
        for name, dd in self.picker.items():
            dd.observe(lambda change, n=name: None if self._picking else self._open(TABS.index(n)), names="value")
        heads = {**self.picker, "Search": self.query}
        children = [self._new(w.VBox, children=[heads[n], p]) if n in heads else p for n, p in zip(TABS, self.panes)]
        self.tabs = self._new(w.Tab, children=children, titles=list(TABS))
        self.tabs.observe(lambda change: self._open(change["new"]), names="selected_index")
        self.drawer = self._new(w.Accordion, children=[self.tabs], titles=["Inspector"], selected_index=None)
        self.drawer.observe(lambda change: self._open(self.tabs.selected_index), names="selected_index")
        transcript = self._new(w.VBox, children=[self.sheets, self.status, self.steps, self.stream, self.tool])
        self.view = self._new(w.VBox, children=[transcript, self.drawer])
        self.view.add_class(SCOPE)
        self._register()
        self.sink.show(self.view, self.display_id)
        return self

    def finish(self, turn: Any = None) -> Rendering:
        """Stop listening and replace the live display by the static rendering of the turn."""
        turn = turn if turn is not None else (self.agent.turns[-1] if self.agent.turns else None)
        rendering = render_turn(turn, agent=self.agent) if turn is not None else Rendering(
            "no turn", h.root(h.note("The turn did not start.")))
        return self.replace(rendering)

    def replace(self, rendering: Rendering) -> Rendering:
        """Stop listening and show `rendering` where the live view was (e.g. the one error of a failed turn)."""
        self.throttle.flush()
        self._unregister()
        self.sink.update(rendering, self.display_id)
        if not self._finished:
            for widget in reversed(self._widgets):
                widget.close()  # nothing of the live view stays in the saved notebook
            self._finished = True
        return rendering

    def __enter__(self) -> "LiveTurn":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        turn = getattr(exc[1], "turn", None) if exc[1] is not None else None
        self.finish(turn)

    # -- extensions -----------------------------------------------------------------------------
    def _register(self) -> None:
        suffix = self.display_id.replace("-", "_")
        hooks: dict[str, tuple[str, Callable[..., Any]]] = {
            # before _10_unmask_secrets (masked arguments are shown), after _10_mask_secrets (masked results)
            "tool_execute_before": ("_00", self._on_tool_before), "tool_execute_after": ("_99", self._on_tool_after),
            "reasoning_stream": ("_90", self._on_reasoning), "response_stream_chunk": ("_90", self._on_chunk),
            "tool_output_update": ("_90", self._on_progress), "call_recorded": ("_90", self._on_record),
            "chat_model_call_after": ("_90", self._on_answered),
        }
        for point, (prefix, fn) in hooks.items():
            name = f"{prefix}_{suffix}"
            self.agent.register_extension(point, fn, name=name)
            self._registered.append((point, name))

    def _unregister(self) -> None:
        for point, name in self._registered:
            self.agent.extensions.unregister(point, name)
        self._registered.clear()

    def _on_reasoning(self, text: str) -> None:
        self.throttle.push("reasoning", text)

    def _on_chunk(self, stream_data: dict[str, Any]) -> None:
        self.throttle.push("response", stream_data.get("full", ""))

    def _on_progress(self, ctx: dict[str, Any]) -> None:
        self.throttle.push("progress", str(ctx.get("content", "")))

    def _on_tool_before(self, tool_args: dict[str, Any], tool_name: str) -> None:
        def update() -> None:
            self._set(self.stream, "value", "")  # the reply is complete: its request is the tool card now
            self._tool_card(tool_name, tool_args, "", "running")
            self._set(self.status, "value", self._status_html("running", tool_name))
        self.throttle.now(update)

    def _on_tool_after(self, response: Any, tool_name: str) -> None:
        def update() -> None:
            self._tool_card(tool_name, None, str(getattr(response, "message", "")), "done")
            self._set(self.status, "value", self._status_html("running"))
        self.throttle.now(update)

    def _on_answered(self, **_: Any) -> None:
        """The model answered: its call is in the Calls tab before the tool it asked for runs."""
        record = getattr(self.agent.models, "current", None)
        if record is not None:
            self.throttle.now(lambda: self._call_card(record))

    def _on_record(self, record: Any) -> None:
        self.throttle.now(lambda: self._recorded(record))

    # -- widget updates (always under the throttle's lock) --------------------------------------------
    def _set(self, widget: Any, name: str, value: Any) -> None:
        if isinstance(value, str):
            value = self._html(value)
            self.sent += len(value)
        setattr(widget, name, value)

    def _html(self, value: str) -> str:
        """`value` with its inline styles as classes; a class not sent yet goes out first, in the stylesheet."""
        value = self.css.squeeze(value)
        sheet = self.css.sheet()
        if sheet is not None:
            self.sent += len(sheet)
            self.sheets.children = (*self.sheets.children, self._new(self._html_cls(), value=sheet))
        return value

    def _apply(self, batch: dict[str, Any]) -> None:
        """Show the tail of the reasoning (until the response starts) or of the response, and tool progress;
        the interval grows with what this call already sent, and a call past BUDGET waits for its step card."""
        self._stream.update(batch)
        secrets = self.agent.secrets
        # masked before the tail is cut (a cut inside a secret would show its end), and an unfinished
        # secret at the end of the stream so far is hidden too
        mask = secrets.mask_live if secrets else str
        updates = []
        if "reasoning" in batch or "response" in batch:
            label, text = ("response", self._stream["response"]) if self._stream.get("response") else \
                ("reasoning", self._stream.get("reasoning", ""))
            updates.append((self.stream, f'<pre style="{h.MONO};white-space:pre-wrap;color:{h.INK};background:{h.PANEL};'
                                         f'padding:4px 8px;margin:2px 0">{h.esc(label)} … {h.esc(_tail(mask(text)))}</pre>'))
        if "progress" in batch and self._tool_head:
            updates.append((self.tool, self._tool_head + h.pre(_tail(mask(batch["progress"])))))
        for widget, value in updates:
            if self.call_sent + len(value) > BUDGET - len(PAUSED):  # room is kept for the note itself
                value = PAUSED
                if widget.value == self._html(value):
                    continue
            self.call_sent += len(value)
            self._set(widget, "value", value)
        self.throttle.interval = self.interval * (1 + self.call_sent // STEP)

    def _tool_card(self, name: str, args: dict[str, Any] | None, result: str, state: str) -> None:
        if args is not None:  # code is shown once: in full on the approval and the step card, here its first line
            code = str(args.get("code", ""))
            if code.count("\n") > 0:
                args = {**args, "code": code.split("\n", 1)[0] + f" … ({code.count(chr(10)) + 1} lines)"}
            self._tool_args = json.dumps(args, ensure_ascii=False, indent=1)[:CAP]
        head = f"{h.badge(state, 'tool' if state == 'running' else 'ok')}{h.code(name)}" + h.pre(self._tool_args)
        self._tool_head = head
        body = h.collapsed(self.agent.mask(result), short=400, cap=CAP, label="result") if result else ""
        self._set(self.tool, "value", h.details(head, body, open_=True) if body else head)

    def _recorded(self, record: Any) -> None:
        self._call_card(record)
        if record.role == "chat":
            card = self._new(self._html_cls(), value=self._html(step_card(record, self.style, open_=False, cap=CAP)))
            self.sent += len(card.value)
            self.steps.children = (*self.steps.children, card)
            self._stream.clear()
            self._tool_head = ""
            self.call_sent, self.throttle.interval = 0, self.interval
            self._set(self.stream, "value", "")
            self._set(self.tool, "value", "")
        self._set(self.status, "value", self._status_html(f"running · {len(self.agent.calls)} calls recorded"))
        self._load(self.tabs.selected_index)  # only the open tab is rebuilt; the others load when opened

    # -- inspector tabs, built when opened ------------------------------------------------------------
    def _open(self, index: int | None) -> None:
        """A tab, the drawer or a call picker changed in the front end: build that tab now."""
        self.throttle.now(lambda: self._load(index))

    def _load(self, index: int | None) -> None:
        if index is None or self._finished or self.drawer.selected_index != 0:
            return
        name = TABS[index]
        builders: dict[str, Callable[[], Rendering]] = {
            "Prompt": lambda: render_prompt(self.agent), "Extras": lambda: render_extras(self.agent),
            "History": lambda: render_history(self.agent, messages_limit=60, topics_limit=40), "Skills": lambda: render_skills(self.agent),
            "Tools": lambda: render_tools(self.agent), "Diff": self._diff_view,
            "Search": lambda: render_search(self.agent.calls, self.query.value, agent=self.agent) if self.query.value.strip()
            else Rendering("", h.note("Type a phrase (from the answer, say) to find every part of every call holding it.")),
        }
        if name == "Calls":  # pushed as the calls complete (see _recorded)
            return
        if name in self.picker:
            self._refresh_picker(self.picker[name])
        self._set(self.panes[index], "value", builders[name]().html)

    def _refresh_picker(self, dd: Any) -> None:
        options = [(f"#{c.index} {c.role}" + ("" if c.role == "chat" else f" ({c.purpose})"), c.index) for c in self.agent.calls]
        if list(dd.options) == options:
            return
        value = dd.value if dd.value in [v for _, v in options] else (options[-1][1] if options else None)
        self._picking = True  # setting options and value fires the observer; the caller renders once
        try:
            dd.options = options
            dd.value = value
        finally:
            self._picking = False

    def _call_card(self, record: Any) -> None:
        """One collapsed card per call in the Calls tab: added when the model answered, redrawn once when the
        call's record is complete (with the tool's result)."""
        body = render_call(record, agent=self.agent, cap=CAP, messages_limit=MESSAGES, group_over=40).html
        head = f"#{record.index} {record.role}" + ("" if record.role == "chat" else f" ({record.purpose})")
        value = self._html(h.details(h.esc(head), body))
        card = self._cards.get(record.index)
        if card is None:
            card = self._cards[record.index] = self._new(self._html_cls(), value=value)
            self.calls.children = (*self.calls.children, card)
        elif card.value != value:
            card.value = value
        self.sent += len(value)

    def _selected(self, name: str) -> Any:
        value = self.picker[name].value
        return next((c for c in self.agent.calls if c.index == value), None)

    def _diff_view(self) -> Rendering:
        c = self._selected("Diff")
        chats = [x for x in self.agent.calls if x.role == "chat" and c is not None and x.agent == c.agent and x.index < c.index]
        if c is None or not chats:
            return Rendering("", h.note("Pick a chat call that has an earlier call to compare with."))
        return render_diff(chats[-1], c, agent=self.agent)

    # -- helpers ------------------------------------------------------------------------------------
    def _new(self, cls: Any, **kwargs: Any) -> Any:
        widget = cls(**kwargs)
        self._widgets.append(widget)
        return widget

    @staticmethod
    def _html_cls() -> Any:
        import ipywidgets as w
        return w.HTML

    def _status_html(self, state: str, tool: str | None = None) -> str:
        """The turn's state, and the plugins' status bars (model, context use, the running tool, cost)."""
        from a0nb.inspector.ui_elements import status_line, ui_elements
        try:
            bars = [status_line(e, self.agent, tool) for e in ui_elements(self.agent, "status_bar")]
        except Exception:  # noqa: BLE001 - the live view must not break a turn over a plugin's status line
            bars = []
        text = " · ".join([state] + [b for b in bars if b])
        return f'<div class="a0-status" style="{h.FONT};color:{h.MUTED}">{h.badge("a0", "assistant")}{h.esc(text)}</div>'


def _tail(text: str) -> str:
    return text if len(text) <= TAIL else "…" + text[-TAIL:]
