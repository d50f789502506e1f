"""Live widgets without a kernel: the throttle's rate limit and trailing flush, LiveTurn streaming into widgets,
tabs built on demand, finish() swapping in the static rendering and unregistering its extensions."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from inspector_nb import QUESTION, make_notebook

from a0nb import Agent
from a0nb.errors import A0Error
from a0nb.inspector import LiveTurn, Rendering, Throttle, render_turn
from a0nb.inspector.live import TABS


class FakeDisplay:
    def __init__(self) -> None:
        self.events: list[tuple[str, Any, str]] = []

    def show(self, obj: Any, display_id: str) -> None:
        self.events.append(("show", obj, display_id))

    def update(self, obj: Any, display_id: str) -> None:
        self.events.append(("update", obj, display_id))


def test_throttle_never_exceeds_twenty_updates_per_second() -> None:
    emitted: list[tuple[float, dict[str, Any]]] = []
    lock = threading.Lock()

    def emit(batch: dict[str, Any]) -> None:
        with lock:
            emitted.append((time.monotonic(), dict(batch)))

    throttle = Throttle(emit, interval=0.05)
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < 0.6:  # a fast stream: thousands of chunks in 0.6 s
        n += 1
        throttle.push("response", f"text {n}")
    throttle.flush()
    duration = time.monotonic() - start
    times = [t for t, _ in emitted]
    gaps = [b - a for a, b in zip(times[:-2], times[1:-1])]  # the final flush at the end may come early
    assert n > 1000
    assert all(g >= 0.049 for g in gaps), min(gaps)
    assert len(emitted) <= 20 * duration + 2
    assert emitted[-1][1]["response"] == f"text {n}"  # the latest text always arrives


def test_throttle_trailing_flush_without_more_input() -> None:
    emitted: list[dict[str, Any]] = []
    throttle = Throttle(emitted.append, interval=0.05)
    throttle.push("a", 1)
    throttle.push("a", 2)  # within the interval: coalesced, delivered by the timer
    assert emitted == [{"a": 1}]
    time.sleep(0.2)
    assert emitted == [{"a": 1}, {"a": 2}]


def test_throttle_with_fake_clock_coalesces_keys() -> None:
    now = [0.0]
    emitted: list[dict[str, Any]] = []
    throttle = Throttle(emitted.append, interval=0.05, clock=lambda: now[0])
    throttle.push("reasoning", "r1")
    now[0] = 0.01
    throttle.push("reasoning", "r2")
    throttle.push("response", "x")
    throttle.now(lambda: emitted.append({"event": "tool"}))
    assert emitted == [{"reasoning": "r1"}, {"reasoning": "r2", "response": "x"}, {"event": "tool"}]


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Agent:
    folder = make_notebook(tmp_path / "nb")
    monkeypatch.chdir(folder)
    return Agent(folder, model="scripted:replies.yaml")


def test_live_turn_streams_and_finishes_static(agent: Agent) -> None:
    display = FakeDisplay()
    live = LiveTurn(agent, display=display).start()
    kind, view, display_id = display.events[0]
    assert kind == "show" and view is live.view and display_id == live.display_id
    assert all(agent.extensions.registered[p] for p in ("reasoning_stream", "response_stream_chunk", "call_recorded",
                                                        "tool_execute_before", "tool_execute_after",
                                                        "tool_output_update"))
    turn = agent.ask(QUESTION)
    assert len(live.steps.children) == 3  # one finished step card per chat call
    assert "Printing rows" in live.steps.children[0].value and "row 39" in live.steps.children[0].value
    assert "forty rows" in live.steps.children[0].value  # the reasoning was kept on the card
    assert live.throttle.flushes >= 1 and live.sent > 0
    rendering = live.finish(turn)
    kind, obj, display_id = display.events[-1]
    assert kind == "update" and display_id == live.display_id and obj is rendering
    assert rendering._repr_mimebundle_()[0] == render_turn(turn, agent=agent)._repr_mimebundle_()[0]
    assert not any(agent.extensions.registered.values())
    assert all(w.comm is None for w in live._widgets)  # closed: no widget state left behind


def test_tabs_are_built_only_when_opened(agent: Agent) -> None:
    live = LiveTurn(agent, display=FakeDisplay()).start()
    turn = agent.ask(QUESTION)
    placeholder = live.panes[0].value
    built = [p for n, p in zip(TABS, live.panes) if n != "Calls"]
    assert all(p.value == placeholder for p in built)  # the inspector drawer is closed
    live.drawer.selected_index = 0
    assert "System prompt" in live.panes[TABS.index("Prompt")].value
    assert live.panes[TABS.index("History")].value == placeholder
    for name, needle in (("Extras", "notebook_note"), ("History", "current topic"), ("Skills", "Available"),
                         ("Tools", "code_execution"), ("Diff", "Call #3 against call #2")):
        live.tabs.selected_index = TABS.index(name)
        assert needle in live.panes[TABS.index(name)].value, name
    live.finish(turn)


def test_calls_tab_holds_every_completed_call_without_a_round_trip(agent: Agent) -> None:
    """Pushed from the kernel as each call is recorded: the page needs no message back (the kernel's main
    thread may be busy running the agent's Python code), and the drawer need not be open."""
    live = LiveTurn(agent, display=FakeDisplay()).start()
    seen: list[int] = []
    agent.register_extension("call_recorded", lambda record: seen.append(len(live.calls.children)), name="_95_probe")
    turn = agent.ask(QUESTION)
    assert seen == [1, 2, 3]  # the card was there when the next hook ran, i.e. before the turn went on
    cards = [c.value for c in live.calls.children]
    assert [f"Call #{i}" in v for i, v in enumerate(cards, 1)] == [True, True, True]
    assert live.drawer.selected_index is None
    live.finish(turn)


def test_widget_state_per_call_is_small(agent: Agent) -> None:
    live = LiveTurn(agent, display=FakeDisplay()).start()
    turn = agent.ask(QUESTION)
    sizes = [len(json.dumps(w.get_state(), default=str)) for w in live.steps.children]
    assert max(sizes) < 200_000
    assert live.sent / len(turn.calls) < 200_000
    live.finish(turn)


def test_context_manager_finishes_with_the_failed_turn(agent: Agent) -> None:
    display = FakeDisplay()
    with pytest.raises(A0Error):
        with LiveTurn(agent, display=display):
            agent.ask(QUESTION)
            agent.ask("one more")  # the script has no replies left
    kind, obj, _ = display.events[-1]
    assert kind == "update" and isinstance(obj, Rendering)
    assert obj.text.startswith("Turn 2 · error")
    assert not any(agent.extensions.registered.values())


def test_long_streams_slow_down_and_stop_within_the_budget(agent: Agent) -> None:
    from a0nb.inspector.live import BUDGET, STEP
    live = LiveTurn(agent, display=FakeDisplay(), interval=0.05).start()
    text = ""
    for i in range(3000):  # each update re-sends the 500-character tail: ~600 characters per update
        text += f"chunk {i} "
        live._apply({"response": text})
        if live.call_sent >= STEP:
            assert live.throttle.interval > 0.05
    assert live.call_sent <= BUDGET
    assert "still streaming" in live.stream.value
    assert live.stream.value.count("chunk") == 0
    live.finish()


def _inline(html: str, sheets: list[str]) -> str:
    """The live HTML with each class put back as the inline style its rule holds."""
    import re
    rules = dict(re.findall(r"\.a0-live \.(a0s[0-9a-f]{8})\{([^}]*)\}", "".join(sheets)))

    def one(m: re.Match[str]) -> str:
        names = m.group(1).strip('"').split()
        styles = [rules[n] for n in names if n in rules]
        assert len(styles) == 1, (names, "a class with no rule sent")
        rest = " ".join(n for n in names if n not in rules)
        return (f' class="{rest}"' if rest else "") + f' style="{styles[0]}"'
    return re.sub(r' class=("[^"]*"|a0s[0-9a-f]{8})', one, html)


def test_live_cards_are_the_static_call_rendering_with_styles_sent_once(agent: Agent) -> None:
    """Inline styles travel as classes (each rule once per live turn): put back, the Calls tab's cards are
    exactly render_call's HTML of the newest messages, and the step cards step_card's."""
    from a0nb.inspector import html as h
    from a0nb.inspector.base import PathStyle
    from a0nb.inspector.live import CAP, MESSAGES
    from a0nb.inspector.views import render_call, step_card
    live = LiveTurn(agent, display=FakeDisplay()).start()
    turn = agent.ask(QUESTION)
    sheets = [w.value for w in live.sheets.children]
    rules = "".join(sheets).count("{")
    assert rules == len(set("".join(sheets).split("}"))) - 1  # no rule sent twice
    style = PathStyle.for_agent(agent)
    for card, call in zip(live.calls.children, turn.calls):
        head = f"#{call.index} {call.role}" + ("" if call.role == "chat" else f" ({call.purpose})")
        body = render_call(call, agent=agent, cap=CAP, messages_limit=MESSAGES, group_over=40).html
        assert 'style="' not in card.value
        assert _inline(card.value, sheets) == h.details(h.esc(head), body)
    for card, call in zip(live.steps.children, [c for c in turn.calls if c.role == "chat"]):
        assert _inline(card.value, sheets) == step_card(call, style, open_=False, cap=CAP)
    live.finish(turn)
