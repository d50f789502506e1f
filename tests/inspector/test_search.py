"""Search from the answer back to the prompt: a phrase is found in every part of every call that holds it, with
the part's source (file and extension), highlighted in context; `%a0 search` and the live Search tab show it."""
from __future__ import annotations

from typing import Any

from a0nb.inspector import LiveTurn, render_search
from a0nb.inspector.live import TABS
from a0nb.inspector.search import find


def test_a_phrase_is_traced_to_every_part_and_its_source(scripted: tuple[Any, Any]) -> None:
    agent, turn = scripted
    hits = find(agent.calls, "numbered   FROM 0")  # case and spacing as typed in a hurry
    assert {h.call for h in hits} == {c.index for c in agent.calls}  # the persistent extra rides every call
    note = [h for h in hits if "notebook_note" in h.where]
    assert len(note) == len(agent.calls)
    assert "_50_notebook_note.py" in note[0].source
    before, match, after = note[0].snippets[0]
    assert match == "numbered from 0" and after.startswith(".")
    r = render_search(agent.calls, "numbered from 0", agent=agent)
    assert r.html.count("<mark") >= len(agent.calls) and "./extensions/message_loop_prompts_after/_50_notebook_note.py" in r.html
    assert r.text.splitlines()[0].startswith("“numbered from 0”:")
    assert any("notebook_note" in line and "_50_notebook_note.py" in line for line in r.text.splitlines()[1:])


def test_a_phrase_from_a_reply_and_one_found_nowhere(scripted: tuple[Any, Any]) -> None:
    agent, _ = scripted
    hits = find(agent.calls, "Printed 40 rows")
    assert any(h.where == "reply" for h in hits)
    assert "No part of any recorded call" in render_search(agent.calls, "zebra crossing", agent=agent).html
    assert find(agent.calls, "   ") == []


def test_the_live_search_tab(scripted: tuple[Any, Any]) -> None:
    agent, turn = scripted
    from test_live import FakeDisplay  # type: ignore[import-not-found]
    live = LiveTurn(agent, display=FakeDisplay()).start()
    live.drawer.selected_index = 0
    live.tabs.selected_index = TABS.index("Search")
    pane = live.panes[TABS.index("Search")]
    assert "Type a phrase" in pane.value
    live.query.value = "numbered from 0"
    assert "<mark" in pane.value and "_50_notebook_note.py" in pane.value
    live.finish(turn)
