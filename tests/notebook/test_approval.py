"""The notebook's approver outside a widget front end (the widget itself is driven in tests/browser): the code is
shown once and masked, y / t / anything else decide, "this turn" holds until the next turn, and the magic
installs it as `agent.shared.approver`."""
from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any, Iterator

import pytest

from a0nb.notebook.approval import NotebookApprover, decision_line, highlighted


def approver(turn: list[int]) -> NotebookApprover:
    return NotebookApprover(lambda: False, lambda s: s.replace("hunter2", "§§secret(PW)"), lambda: turn[0])


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    queue: list[str] = []

    def fake_input(prompt: str = "") -> str:
        print(prompt, end="")
        if not queue:
            raise EOFError
        return queue.pop(0)
    monkeypatch.setattr(builtins, "input", fake_input)
    yield queue


def test_stdin_fallback_shows_the_code_once_masked(answers: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    answers.append("y")
    assert approver([1])("python", "login('hunter2')\nprint(1)") is True
    out = capsys.readouterr().out
    assert out.count("login(") == 1 and "hunter2" not in out and "§§secret(PW)" in out
    assert out.rstrip().endswith("a0nb: python code allowed")


def test_deny_is_the_default_and_no_stdin_refuses(answers: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    a = approver([1])
    answers.append("")
    assert a("terminal", "rm -rf build") is False
    assert a("terminal", "ls") is False  # EOFError: a headless run refuses
    assert capsys.readouterr().out.count("code denied") == 2


def test_allow_for_this_turn_holds_until_the_next_turn(answers: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    turn = [3]
    a = approver(turn)
    answers.append("t")
    assert a("python", "x = 1") is True
    assert a("python", "x = 2") is True and a("terminal", "ls") is True  # not asked again this turn
    assert capsys.readouterr().out.count("wants to run") == 1
    turn[0] = 4
    assert a("python", "x = 3") is False  # a new turn asks again (and no answer is left: refused)


def test_decision_line_and_highlighting() -> None:
    text, html = decision_line("python", "turn")
    assert text == "a0nb: python code allowed for the rest of this turn" and 'class="a0-decision"' in html
    code = highlighted("for i in range(3):\n    print(i)", "python")
    assert code.count("range") == 1 and "color:" in code and "<script" not in code


def test_the_magic_installs_the_notebook_approver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_magics import dispose, make_shell  # type: ignore[import-not-found]
    from a0nb.notebook.magics import get_magics
    monkeypatch.chdir(tmp_path)
    shell: Any = make_shell()
    shell.run_line_magic("load_ext", "a0nb")
    try:
        agent = get_magics(shell).agent
        assert isinstance(agent.shared.approver, NotebookApprover)
        assert agent.subordinate_agent().shared.approver is agent.shared.approver
    finally:
        shell.run_line_magic("unload_ext", "a0nb")
        dispose()
