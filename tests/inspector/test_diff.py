"""The call diff: parts matched by key (repeated keys by occurrence), appeared / vanished / changed with
unified diffs, message and token deltas, and its text and HTML renderings."""
from __future__ import annotations

from typing import Any

from a0nb.inspector import diff_calls, render_diff
from a0nb.inspector.diff import MAX_DIFF_LINES, keyed
from a0nb.engine.records import CallRecord, Part


def part(kind: str, label: str, text: str, origin: str = "raw") -> Part:
    return Part(kind, label, text, len(text.split()), 0, f"source of {label}", origin=origin)  # type: ignore[arg-type]


def record(index: int, parts: list[Part], messages: int = 3) -> CallRecord:
    return CallRecord(index, "chat", "scripted:x", [{"role": "user", "content": "m"}] * messages, parts)


def test_appeared_vanished_changed_and_unchanged() -> None:
    a = record(1, [part("system", "system: main prompt", "be brief\nbe kind"),
                   part("extras", "extras: current_datetime", "10:00", "temporary"),
                   part("history", "history: topic 1", "hello")])
    b = record(2, [part("system", "system: main prompt", "be brief\nbe exact"),
                   part("history", "history: topic 1", "hello"),
                   part("skill", "skill: pandas", "use df.info()", "reattached")], messages=5)
    d = diff_calls(a, b)
    assert [c.label for c in d.appeared] == ["skill: pandas"]
    assert [c.label for c in d.vanished] == ["extras: current_datetime"]
    assert [c.label for c in d.changed] == ["system: main prompt"]
    assert d.unchanged == 1 and d.messages_delta == 2 and d.tokens_delta == b.tokens - a.tokens
    diff = d.changed[0].diff
    assert "-be kind" in diff and "+be exact" in diff
    assert diff[:2] == ("--- a/system: main prompt", "+++ b/system: main prompt")  # the label, not kind:label


def test_repeated_keys_match_by_occurrence() -> None:
    a = record(1, [part("history", "history: current topic (ai)", "one")])
    b = record(2, [part("history", "history: current topic (ai)", "one"),
                   part("history", "history: current topic (ai)", "two")])
    assert list(keyed(b.parts)) == ["history:history: current topic (ai)", "history:history: current topic (ai) #2"]
    d = diff_calls(a, b)
    assert [c.label for c in d.appeared] == ["history: current topic (ai) #2"] and not d.changed


def test_summarised_history_counts_as_changed() -> None:
    a = record(1, [part("history", "history: topic 1", "same text")])
    b = record(2, [part("history", "history: topic 1", "same text", "summarised")])
    assert [c.label for c in diff_calls(a, b).changed] == ["history: topic 1"]


def test_long_diffs_are_cut() -> None:
    old = "\n".join(f"line {i}" for i in range(1000))
    new = "\n".join(f"LINE {i}" for i in range(1000))
    d = diff_calls(record(1, [part("system", "system: s", old)]), record(2, [part("system", "system: s", new)]))
    assert len(d.changed[0].diff) == MAX_DIFF_LINES + 1 and d.changed[0].diff[-1].startswith("…")


def test_render_diff_text_and_html() -> None:
    a = record(1, [part("extras", "extras: k", "v1", "temporary"), part("history", "history: topic 1", "x")])
    b = record(2, [part("extras", "extras: k", "v2", "temporary"), part("user", "user: new", "hi")])
    r = render_diff(a, b, folder="/nonexistent")
    assert r.text.splitlines()[0] == "Call #2 vs #1: +0 messages, +0 tokens; 1 appeared, 1 vanished, 1 changed, 0 unchanged"
    assert "  + user: new (1)" in r.text and "  - history: topic 1 (1)" in r.text and "  ~ extras: k (+0)" in r.text
    assert "Appeared (1)" in r.html and "Vanished (1)" in r.html and "Changed (1)" in r.html
    assert "-v1" in r.html and "+v2" in r.html
    assert set(r._repr_mimebundle_()[1]["a0"]) == {"a", "b"}


def test_identical_calls(scripted: tuple[Any, Any]) -> None:
    agent, turn = scripted
    c = turn.calls[0]
    r = render_diff(c, c, agent=agent)
    assert "0 appeared, 0 vanished, 0 changed" in r.text and "sent the same parts" in r.html


def test_real_turn_diff_shows_new_history(scripted: tuple[Any, Any]) -> None:
    agent, turn = scripted
    d = diff_calls(turn.calls[0], turn.calls[1])
    assert [c.label for c in d.appeared] == ["history: current topic (ai)", "history: current topic (tool_result)"]
    assert d.messages_delta == 2 and not d.vanished
