"""render_map: a batch summary whose text and HTML are the same in every run (volatile figures in metadata)."""
from __future__ import annotations

from a0nb.engine.batch import MapResult
from a0nb.engine.turn import Turn
from a0nb.inspector import render_map


def result(elapsed: float) -> MapResult:
    turns = [Turn(1, "Where is Oslo?", text="Norway"), Turn(2, "Where is <b>Lima</b>?", error="auth failed"),
             Turn(3, "Where is Rome?", error="cancelled: the batch was interrupted", interrupted=True)]
    return MapResult(turns, ["Oslo", "<b>Lima</b>", "Rome"], [t.message for t in turns], elapsed=elapsed,
                     interrupted=True)


def test_the_summary_is_deterministic_and_links_each_item() -> None:
    first, second = render_map(result(1.5), name="my results"), render_map(result(9.25), name="my results")
    assert (first.text, first.html) == (second.text, second.html)
    assert first.meta["elapsed"] == 1.5 and second.meta["elapsed"] == 9.25 and first.meta["failed"] == 2
    assert first.text.splitlines() == [
        "3 items · 1 ok · 2 failed · interrupted (finished items kept) · executor threads",
        "  0  ok          Oslo                          Norway",
        "  1  failed      <b>Lima</b>                   auth failed",
        "  2  interrupted Rome                          cancelled: the batch was interrupted"]
    assert 'href="#a0-my-results-2"' in first.html and 'id="a0-my-results-2"' in first.html
    assert "<b>Lima</b>" not in first.html and "&lt;b&gt;Lima&lt;/b&gt;" in first.html


def test_a_map_result_displays_through_the_inspector() -> None:
    data, meta = result(0.1)._repr_mimebundle_()
    assert data["text/plain"].startswith("3 items · 1 ok") and meta["a0"]["items"] == 3
