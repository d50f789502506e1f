"""Inspector cost over a 1,000-message history: size and render time of the static HTML (turn, call, history),
and the live widget traffic per call. Targets: turn HTML <= 1.5 MB; widget state per call <= 200 kB.
Run: python benchmarks/bench_inspector.py"""
from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from a0nb import Agent  # noqa: E402
from a0nb.engine.composition import build, section  # noqa: E402
from a0nb.engine.history import History  # noqa: E402
from a0nb.inspector import LiveTurn, render_call, render_history, render_turn  # noqa: E402
from a0nb.engine.loop import LoopData  # noqa: E402
from a0nb.engine.tokens import TokenCounter  # noqa: E402
from a0nb.engine.turn import Turn  # noqa: E402

REPEATS = 21
MESSAGES = 1000
WORDS = ("agent tool result file path error test value output request model token budget summary topic "
         "history message notebook kernel cell python function return list dict string number").split()


def history(counter: TokenCounter) -> History:
    rng = random.Random(7)
    h = History(counter=counter)
    kinds = [(False, "user"), (True, "ai"), (False, "tool_result"), (True, "ai"), (False, "tool_result")]
    for i in range(MESSAGES):
        ai, kind = kinds[i % 5]
        if i and i % 5 == 0:
            h.new_topic()
        body = " ".join(rng.choice(WORDS) for _ in range(60))
        h.add(ai, body if ai else {kind: body}, kind)
    return h


def record(index: int, h: History, counter: TokenCounter) -> Any:
    from a0nb.engine.records import CallRecord
    ld = LoopData(system=[section("You are a careful agent. " * 80), section("## Tools\n" + "tool text " * 300)],
                  history_output=h.output(), extras_temporary={"current_datetime": "2026-01-01 00:00:00"},
                  extras_persistent={"note": "rows are numbered from 0"})
    extras = {**ld.extras_persistent, **ld.extras_temporary}
    messages, parts = build(ld, "[EXTRAS]\n" + json.dumps(extras), extras, counter)
    request = {"tool_name": "code_execution", "tool_args": {"runtime": "python", "code": "df.describe()"},
               "headline": f"Step {index}", "thoughts": ["look at the data"]}
    return CallRecord(index, "chat", "scripted:bench", messages, parts, turn=1, response=json.dumps(request),
                      tool_request=request, tool_result="count 1000\nmean 41.7\n" * 40, usage={"prompt_tokens": 1})


def timed(fn: Callable[[], Any]) -> tuple[list[float], Any]:
    samples, out = [], None
    for _ in range(REPEATS):
        start = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - start)
    return samples, out


def stats(samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    return f"median {statistics.median(ms):8.2f} ms  min {min(ms):8.2f}  max {max(ms):8.2f}"


class Sink:
    def show(self, obj: Any, display_id: str) -> None: ...
    def update(self, obj: Any, display_id: str) -> None: ...


def _text_size(widget: Any) -> int:
    """Characters of HTML a pane holds: its own value, or its children's."""
    value = getattr(widget, "value", None)
    if isinstance(value, str):
        return len(value)
    return sum(_text_size(child) for child in getattr(widget, "children", ()))


def live_traffic(agent: Agent, records: list[Any]) -> tuple[int, int, int, int]:
    """(characters sent for one call streaming a 21k-character reply in real time, its step-card state,
    the Calls tab and the History tab as built on demand)."""
    live = LiveTurn(agent, display=Sink()).start()
    reply = json.dumps(records[0].tool_request) + " " + "streamed text " * 1500
    before, start = live.sent, time.perf_counter()
    for i in range(0, len(reply), 8):  # 8-character chunks, ~4 ms apart: about 50 tokens/s, ~10 s in all
        live._on_chunk({"full": reply[: i + 8]})
        time.sleep(0.004)
    live.throttle.now(lambda: live._recorded(records[0]))
    per_call = live.sent - before
    print(f"live: streamed {len(reply):,} characters in {time.perf_counter() - start:.1f} s, "
          f"{live.throttle.flushes} widget updates")
    card = len(json.dumps(live.steps.children[-1].get_state(), default=str))
    live.drawer.selected_index = 0
    live.tabs.selected_index = 5
    calls_tab = _text_size(live.panes[5])  # a VBox of one widget per call since the live Calls tab (issue 20)
    live.tabs.selected_index = 2
    history_tab = _text_size(live.panes[2])
    live.finish(Turn(1, "bench", "done", calls=records))
    return per_call, card, calls_tab, history_tab


def main() -> int:
    counter = TokenCounter()
    h = history(counter)
    records = [record(i, h, counter) for i in (1, 2, 3)]
    turn = Turn(1, "Describe the data frame.", "It has 1,000 rows.", calls=records)
    print(f"history: {MESSAGES} messages, {h.tokens(counter):,} tokens; call: {len(records[0].messages)} messages, "
          f"{len(records[0].parts)} parts")
    samples, r = timed(lambda: render_turn(turn, folder="/"))
    turn_size = len(r.html.encode())
    print(f"render_turn  (3 calls)    {stats(samples)}  html {turn_size / 1e6:.3f} MB  (target <= 1.5 MB)")
    samples, r = timed(lambda: render_call(records[0], folder="/"))
    print(f"render_call  (1 call)     {stats(samples)}  html {len(r.html.encode()) / 1e6:.3f} MB")
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(tmp, model=[json.dumps(records[0].tool_request)])
        agent.history, agent.models.records = h, list(records)
        samples, r = timed(lambda: render_history(agent))
        print(f"render_history            {stats(samples)}  html {len(r.html.encode()) / 1e6:.3f} MB")
        sent, card, calls_tab, history_tab = live_traffic(agent, records)
    print(f"live: sent while streaming one 21k-character call {sent / 1e3:.1f} kB; step card state {card / 1e3:.1f} kB "
          f"(target <= 200 kB); on demand: Calls tab {calls_tab / 1e3:.1f} kB, History tab {history_tab / 1e3:.1f} kB")
    ok = turn_size <= 1_500_000 and card <= 200_000 and sent <= 200_000
    print("targets met" if ok else "TARGET MISSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
