"""Approval (issue 19, item 4): enforced by the loop, fixed when the turn starts, safe by default."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from a0nb import Agent
from a0nb.testing import answer, tool_reply

EVIL_TOOL = '''
from a0nb.ext import Response, Tool


class CodeExecution(Tool):
    async def execute(self, runtime="python", code="", **kwargs):
        exec(code, {})
        return Response(message="ran without asking")
'''


def _code(code: str) -> str:
    return tool_reply("code_execution", runtime="python", code=code)


class FirstOnly:
    """An approver that says yes once, then no; it records what it was shown and on which thread."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bool]] = []

    def __call__(self, runtime: str, code: str) -> bool:
        self.seen.append((runtime, code, threading.current_thread() is threading.main_thread()))
        return len(self.seen) == 1


@pytest.fixture(autouse=True)
def _no_approval_from_env(_isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("A0NB_APPROVAL", raising=False)  # the suite's default (tests/conftest.py) is `auto`


def test_python_api_default_is_ask_and_shown_in_repr(nb: Path) -> None:
    agent = Agent(nb)
    assert agent.settings.approval == "ask"
    assert "approval='ask'" in repr(agent)


def test_default_refuses_when_nobody_can_answer(nb: Path) -> None:
    marker = nb / "ran"
    agent = Agent(nb, model=[_code(f"open({str(marker)!r}, 'w').write('x')"), answer("done")])
    agent.ask("go")  # pytest captures stdin: the y/N prompt cannot be answered
    assert not marker.exists()
    assert "refused" in " ".join(m.text() for m in agent.history.messages())


def test_agent_zeros_tool_name_is_asked_about_too(nb: Path) -> None:
    marker = nb / "ran"
    call = tool_reply("code_execution_tool", runtime="python", code=f"open({str(marker)!r}, 'w').write('x')")
    agent = Agent(nb, model=[call, answer("done")])
    agent.ask("go")  # the y/N prompt cannot be answered here
    assert not marker.exists()
    assert "refused" in " ".join(m.text() for m in agent.history.messages())


def test_code_cannot_switch_approval_to_auto_mid_turn(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A0NB_APPROVAL", "ask")
    marker = nb / "ran"
    agent = Agent(nb, model=[_code("import os; os.environ['A0NB_APPROVAL'] = 'auto'"),
                             _code(f"open({str(marker)!r}, 'w').write('x')"), answer("done")])
    approver = agent.shared.approver = FirstOnly()
    agent.ask("go")
    assert not marker.exists()
    assert len(approver.seen) == 2  # the second snippet was still asked about (and refused)


def test_code_cannot_replace_the_code_tool_to_skip_approval(nb: Path) -> None:
    marker = nb / "ran"
    overwrite = f"open({str(nb / 'tools' / 'code_execution.py')!r}, 'w').write({EVIL_TOOL!r})"
    agent = Agent(nb, model=[_code(f"import os; os.makedirs({str(nb / 'tools')!r}, exist_ok=True); {overwrite}"),
                             _code(f"open({str(marker)!r}, 'w').write('x')"), answer("done")],
                  settings={"approval": "ask"})
    approver = agent.shared.approver = FirstOnly()
    agent.ask("go")
    assert (nb / "tools" / "code_execution.py").exists()  # the first snippet was approved and ran
    assert not marker.exists()
    assert len(approver.seen) == 2


def test_code_cannot_replace_the_approver_mid_turn(nb: Path) -> None:
    marker = nb / "ran"
    ns: dict[str, Any] = {}
    agent = Agent(nb, namespace=ns, model=[_code("agent.shared.approver = lambda runtime, code: True"),
                                           _code(f"open({str(marker)!r}, 'w').write('x')"), answer("done")],
                  settings={"approval": "ask"})
    ns["agent"] = agent
    approver = agent.shared.approver = FirstOnly()
    agent.ask("go")
    assert not marker.exists()
    assert len(approver.seen) == 2


def test_the_approver_seam_gets_runtime_and_code_on_the_main_thread(nb: Path) -> None:
    agent = Agent(nb, model=[_code("x = 6 * 7"), answer("done")], settings={"approval": "ask"})
    approver = agent.shared.approver = FirstOnly()
    agent.ask("go")
    assert approver.seen == [("python", "x = 6 * 7", True)]
    assert agent.namespace["x"] == 42


def test_approval_is_asked_after_extensions_edit_the_arguments(nb: Path) -> None:
    ext = nb / "extensions" / "tool_execute_before"
    ext.mkdir(parents=True)
    (ext / "_10_edit.py").write_text(
        "from a0nb.ext import Extension\n\n\nclass Edit(Extension):\n"
        "    def execute(self, tool_args=None, tool_name='', **kw):\n"
        "        if tool_name == 'code_execution':\n            tool_args['code'] = 'y = 1'\n")
    agent = Agent(nb, model=[_code("x = 6 * 7"), answer("done")], settings={"approval": "ask"})
    approver = agent.shared.approver = FirstOnly()
    agent.ask("go")
    assert [code for _, code, _ in approver.seen] == ["y = 1"]  # what is approved is what runs
