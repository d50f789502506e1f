"""The building blocks: path normalisation, composition buckets and colours, chart scaling and compaction
placement, text summaries and the HTML helpers (escaping, collapsing, bars)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from a0nb.engine.compaction import CompactionEvent
from a0nb.inspector import PathStyle, Rendering, composition_chart, history_chart
from a0nb.inspector import html as h
from a0nb.inspector.compose import Palette, buckets, family
from a0nb.inspector.svg import place_compactions
from a0nb.inspector.text import args_text, one_line, turn_text
from a0nb.engine.records import CallRecord, Part
from a0nb.engine.turn import Turn


def test_path_style_names_known_folders(tmp_path: Path) -> None:
    nb, home, bundled = tmp_path / "work" / "nb", tmp_path / "home", tmp_path / "work"
    style = PathStyle.of(nb, home, bundled)
    assert style(f"{nb}/data.csv") == "./data.csv"
    assert style(f"see {home}/skills/x") == "see $A0NB_HOME/skills/x"
    assert style(f"[{bundled}/prompts/a.md]") == "[<a0nb>/prompts/a.md]"
    assert style(f"`{nb}`") == "`.`"
    assert style(f"{nb}2/other") == f"<a0nb>/nb2/other"  # a longer sibling name is not the notebook folder
    assert style.many([nb, home]) == [".", "$A0NB_HOME"]


def part(kind: str, label: str, tokens: int, origin: str = "") -> Part:
    return Part(kind, label, "x", tokens, 0, origin=origin)  # type: ignore[arg-type]


def record(index: int, parts: list[Part]) -> CallRecord:
    return CallRecord(index, "chat", "m", [{"role": "user", "content": "x"}], parts)


PARTS = [part("extras", "extras: k", 3, "temporary"), part("history", "history: topic 1", 10, "raw"),
         part("system", "system: main prompt", 20, "system"), part("extras", "extras: p", 2, "persistent"),
         part("history", "history: bulk 1", 5, "summarised"), part("skill", "skill: s", 4, "reattached")]


def test_buckets_follow_the_prompt_order_of_kinds() -> None:
    got = buckets(record(1, PARTS))
    assert [b for b, _ in got] == ["system: main prompt", "history (summarised)", "history (raw)", "reattached skills",
                                   "extras persistent: p", "extras temporary: k"]
    assert family("extras persistent: p") == "persistent" and family("utility input (summary)") == "other"


def test_palette_keeps_a_bucket_colour_across_calls() -> None:
    palette = Palette()
    first = dict((b, c) for b, _, c in palette.segments(record(1, PARTS)))
    second = dict((b, c) for b, _, c in palette.segments(record(2, PARTS[:3])))
    assert all(first[b] == c for b, c in second.items())
    assert first["system: main prompt"] != first["history (raw)"]


def test_compaction_placement_uses_tokens_after() -> None:
    events = [CompactionEvent(5000, 900, 1000, "truncation", ()), CompactionEvent(3000, 2000, 2500, "utility", ())]
    assert place_compactions([100, 950, 1200, 2100], events) == [1, 3]
    assert place_compactions([], events) == [0, 0]
    assert place_compactions([10], []) == []


def test_charts_are_plain_svg() -> None:
    calls = [record(i, PARTS) for i in range(1, 40)]
    svg = composition_chart(calls)
    assert svg.startswith("<svg") and svg.endswith("</svg>") and "<script" not in svg
    assert svg.count("<rect") == 39 * 6 and "#39" not in svg.split("model call")[0][-20:]
    hist = history_chart(calls[:3], [CompactionEvent(40, 15, 30, "utility", ())])
    assert "budget 30" in hist and "40 → 15" in hist


def test_text_helpers_are_short_and_stable() -> None:
    assert one_line("a\n  b   c", 80) == "a b c" and one_line("x" * 100, 10) == "xxxxxxxxx…"
    assert args_text({"code": "print(1)", "n": 2}) == 'code="print(1)", n=2'
    turn = Turn(3, "hi", "", calls=[record(1, PARTS)], error="boom")
    assert turn_text(turn).splitlines() == ["Turn 3 · error · 1 model call · 0 steps", "  user: hi",
                                            "  #1 no reply", "error: boom"]  # a record without a reply


def test_html_helpers_escape_and_collapse() -> None:
    assert h.esc('<b a="1">') == "&lt;b a=&quot;1&quot;&gt;"
    short = h.collapsed("<script>alert(1)</script>")
    assert "<script>" not in short and "&lt;script&gt;" in short and "<details" not in short
    long = h.collapsed("first line\n" + "y" * 5000, cap=100, label="result")
    assert long.startswith("<details") and "result · first line" in long and "4,911 more characters" in long
    bar = h.stacked_bar([("a", 3, "#000000"), ("b", 1, "#ffffff"), ("empty", 0, "#cccccc")])
    assert "width:75.00%" in bar and "a <span" in bar and "empty <span" in bar  # the legend lists even empty buckets
    assert "width:50.0%" in h.meter(5, 10)


def test_rendering_is_a_display_tuple() -> None:
    r = Rendering("t", "<p>t</p>", {"latency": 1.5})
    data, meta = r
    assert data == {"text/plain": "t", "text/html": "<p>t</p>"} and meta == {"a0": {"latency": 1.5}}
    assert str(r) == "t" and repr(r) == "t" and r.bundle() == (data, meta)
    assert SimpleNamespace(r=r).r.meta["latency"] == 1.5


def test_backticked_spans_in_errors_render_as_code_not_raw_backticks() -> None:
    from a0nb.inspector import html as h
    from a0nb.notebook.magic_output import error_bundle
    from a0nb.errors import ConfigError
    assert "<code>%a0 model x</code>" in h.banner("set `%a0 model x` first") and "`" not in h.banner("set `x` first")
    data, _ = error_bundle(ConfigError("no model: use `%a0 model openai/gpt-4o-mini` or `A0NB_MODEL`"))
    assert data["text/html"].count("<code>") == 2 and "`" not in data["text/html"]
    assert "`%a0 model openai/gpt-4o-mini`" in data["text/plain"]  # the plain text keeps them (it is plain)


def test_a_one_line_error_that_announces_more_shows_its_start() -> None:
    """text/plain keeps an error to one line; a first line ending in ":" ("Its last reply was:") is followed there by
    the start of what it announces, instead of ending on the colon. HTML keeps the rest folded."""
    from a0nb.notebook.magic_output import error_bundle
    from a0nb.errors import TurnError
    data, meta = error_bundle(TurnError("the model sent 3 replies in a row. Its last reply was:\n  Echo: hello\n  more"))
    assert data["text/plain"] == "TurnError: the model sent 3 replies in a row. Its last reply was: Echo: hello more"
    assert "<details>" in data["text/html"] and meta == {"error": "TurnError"}
    long, _ = error_bundle(TurnError("Its last reply was:\n" + "x" * 500))
    assert long["text/plain"].endswith("…") and len(long["text/plain"]) < 260
    plain, _ = error_bundle(TurnError("a sentence.\nmore detail"))
    assert plain["text/plain"] == "TurnError: a sentence."
