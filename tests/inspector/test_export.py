"""Trace export: the self-contained HTML document (all turns, calls and consecutive diffs) and the JSONL
records that round-trip through `a0nb.engine.records.import_jsonl`, subordinate calls included."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from a0nb.errors import A0Error
from a0nb.inspector import export_trace
from a0nb.engine.records import import_jsonl


def test_html_trace_is_self_contained(scripted: tuple[Any, Any], tmp_path: Path) -> None:
    agent, turn = scripted
    path = export_trace(agent, tmp_path / "trace.html")
    html = path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert "<script" not in html.lower() and "<style" not in html.lower() and "http" not in html.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")
    for c in turn.calls:
        assert f'id="call-{c.index}"' in html and f"Call #{c.index} · chat" in html
    assert "Call #2 against call #1" in html and "Call #3 against call #2" in html
    assert "Turn 1 · ok" in html and "latency s" in html  # the export file may carry timings


def test_jsonl_round_trip_with_children(scripted: tuple[Any, Any], tmp_path: Path) -> None:
    agent, turn = scripted
    child = dataclasses.replace(turn.calls[0], index=99, agent=1, parent=turn.calls[1].index, children=[])
    turn.calls[1].children.append(child)
    path = export_trace(agent, tmp_path / "trace.jsonl")
    back = import_jsonl(path)
    assert [r.to_dict() for r in back] == [r.to_dict() for r in agent.calls]
    assert back[1].children[0].index == 99 and back[1].children[0].parts == child.parts
    html = export_trace(agent, tmp_path / "trace.html").read_text(encoding="utf-8")
    assert 'id="call-99"' in html


def test_unknown_suffix_is_a_clear_error(scripted: tuple[Any, Any], tmp_path: Path) -> None:
    agent, _ = scripted
    with pytest.raises(A0Error, match=r"\.html or \.jsonl"):
        export_trace(agent, tmp_path / "trace.csv")


def test_export_before_any_turn(agent_without_turns: Any, tmp_path: Path) -> None:
    html = export_trace(agent_without_turns, tmp_path / "t.html").read_text(encoding="utf-8")
    assert "No turns yet." in html
    assert export_trace(agent_without_turns, tmp_path / "t.jsonl").read_text(encoding="utf-8") == ""


@pytest.fixture
def agent_without_turns(tmp_path: Path) -> Any:
    from inspector_nb import make_notebook

    from a0nb import Agent
    return Agent(make_notebook(tmp_path / "empty"), model="scripted:replies.yaml")
