"""text/plain of a call lists every part with its provenance (prompt files with roots, extension files,
history origin), stable across folders and runs, so a text diff (nbval) catches a provenance change."""
from __future__ import annotations

from pathlib import Path

from inspector_nb import run_turn

from a0nb.engine.records import Part
from a0nb.inspector import render_call
from a0nb.inspector.text import part_rows, provenance_lines


def _text(folder: Path, files: dict[str, str] | None = None) -> str:
    agent, _ = run_turn(folder, files, settings={"frozen_time": "2026-01-31T09:30:00"})
    return render_call(agent.calls[-1], agent=agent).text


def test_parts_and_sources_are_in_the_plain_text(tmp_path: Path) -> None:
    text = _text(tmp_path)
    assert "  parts:" in text
    assert "system: main prompt · 19 tok · agent.system.main.md (notebook) via _10_main_prompt" in text
    assert "[bundled: <a0nb>/extensions/system_prompt/_10_main_prompt.py]" in text
    assert "overrode <a0nb>/prompts/agent.system.main.md" in text
    assert "extras: notebook_note · 7 tok · set by _50_notebook_note (notebook: ./extensions/" in text
    assert "history: current topic (5 parts)" in text and "raw current topic" in text
    assert str(tmp_path) not in text  # paths are relative to stable roots


def test_plain_text_is_the_same_in_another_folder(tmp_path: Path) -> None:
    assert _text(tmp_path / "a" / "deeper") == _text(tmp_path / "b")


def test_a_provenance_change_changes_the_plain_text(tmp_path: Path) -> None:
    before = _text(tmp_path / "a")
    # same prompt text, now from a profile-free .a0proj override: only the provenance differs
    moved = {"prompts/agent.system.skills.md": "## Skills\nNo skills are needed here.\n"}
    after = _text(tmp_path / "b", {".a0proj/prompts/agent.system.skills.md": moved["prompts/agent.system.skills.md"]})
    assert before != after
    changed = [(x, y) for x, y in zip(before.splitlines(), after.splitlines()) if x != y]
    assert changed and all("system: skills" in x for x, _ in changed)


def test_history_parts_are_grouped_and_overrides_listed() -> None:
    parts = [Part("history", "history: topic 1 (user)", "a", 1, 1, "raw topic 1", origin="raw"),
             Part("history", "history: topic 1 (ai)", "b", 2, 2, "raw topic 1", origin="raw"),
             Part("system", "system: main prompt", "c", 3, 0, "main.md (notebook)", extension="_10_main_prompt",
                  origin="system", overrode=("/x/<a0nb>/main.md",))]
    assert part_rows(parts, group_over=0)[0][:2] == ("history: topic 1 (2 parts)", 3)

    class R:
        pass
    r = R()
    r.parts = parts  # type: ignore[attr-defined]
    assert provenance_lines(r) == ["  parts:", "    history: topic 1 (2 parts) · 3 tok · raw topic 1",
                                   "    system: main prompt · 3 tok · main.md (notebook) · overrode /x/<a0nb>/main.md"]


def test_history_parts_before_the_shown_messages_become_one_row_in_their_place() -> None:
    parts = [Part("system", "system: main prompt", "s", 5, 0, "main.md (notebook)", origin="system"),
             *(Part("history", f"history: topic {i} (ai)", "x", 10 + i, i, f"raw topic {i}", origin="raw")
               for i in range(1, 5)),
             Part("history", "history: current topic (user)", "y", 7, 5, "raw current topic", origin="raw")]
    rows = part_rows(parts, group_over=100, since=4)
    assert [r[:3] for r in rows] == [("system: main prompt", 5, "msg 0"),
                                      ("history before message 4 (3 parts)", 11 + 12 + 13, "msg 1–3"),
                                      ("history: topic 4 (ai)", 14, "msg 4"),
                                      ("history: current topic (user)", 7, "msg 5")]
    assert sum(r[1] for r in rows) == sum(p.tokens for p in parts)  # every token still counted
    assert part_rows(parts, group_over=100) == part_rows(parts, group_over=100, since=0)
