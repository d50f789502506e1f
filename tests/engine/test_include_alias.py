"""`§§include(path)` in an answer (Agent Zero's alias, taught by its response-tool tips): the answer the user
sees holds the file's text; history, the call records and a superior agent keep the alias; only files inside
the notebook folder or $A0NB_HOME are read, bounded, and a refused alias stays as written with a diagnostic."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.engine import include_alias
from a0nb.resources import user_home
from a0nb.testing import answer, tool_reply


def _warnings(agent: Agent) -> list[str]:
    return [d.message for d in agent.diagnostics.of("answer")]


def test_the_answer_shows_the_file_and_history_keeps_the_alias(nb: Path) -> None:
    (nb / "report.md").write_text("| city | rows |\n|---|---|\n| Oslo | 12 |\n")
    agent = Agent(nb, model=[answer("Here it is:\n§§include(report.md)\nDone.")])
    turn = agent.ask("make the report")
    assert turn.text == "Here it is:\n| city | rows |\n|---|---|\n| Oslo | 12 |\n\nDone."
    assert "§§include(report.md)" in "".join(m.output_text() for m in agent.history.messages())
    assert "§§include(report.md)" in turn.calls[-1].response and "Oslo" not in turn.calls[-1].response
    assert _warnings(agent) == []


def test_absolute_paths_under_home_and_links_inside_are_read(nb: Path) -> None:
    saved = user_home() / "usr" / "chats" / "c1" / "messages" / "3.txt"  # where upstream's save_tool_call_file puts them
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text("long tool output")
    (nb / "link.txt").symlink_to(nb / "real.txt")
    (nb / "real.txt").write_text("through a link")
    agent = Agent(nb, model=[answer(f"§§include({saved}) / §§include( link.txt )")])
    assert agent.ask("go").text == "long tool output / through a link"


@pytest.mark.parametrize("where", ["outside", "link_out", "missing", "folder", "binary", "large"])
def test_a_refused_alias_stays_as_written_with_a_diagnostic(nb: Path, tmp_path: Path, where: str) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("private")
    names = {"outside": str(outside), "link_out": "out.txt", "missing": "nope.txt", "folder": "sub",
             "binary": "blob.bin", "large": "big.txt"}
    (nb / "out.txt").symlink_to(outside)
    (nb / "sub").mkdir()
    (nb / "blob.bin").write_bytes(b"\xff\xfe\x00binary")
    (nb / "big.txt").write_text("x" * (include_alias.MAX_BYTES + 1))
    alias = f"§§include({names[where]})"
    agent = Agent(nb, model=[answer(f"see {alias}")])
    assert agent.ask("go").text == f"see {alias}"
    [warning] = _warnings(agent)
    assert alias in warning and "left as written" in warning
    [diag] = agent.diagnostics.of("answer")
    assert diag.path == os.path.join(nb, names[where]) and "notebook folder" in diag.fix  # (an absolute name as is)


def test_a_pipe_is_not_opened(nb: Path) -> None:
    os.mkfifo(nb / "fifo")  # opening it for reading would wait for a writer
    agent = Agent(nb, model=[answer("§§include(fifo)")])
    assert agent.ask("go").text == "§§include(fifo)"
    assert "no such file" in _warnings(agent)[0]


def test_the_answer_s_includes_are_bounded_in_all(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(include_alias, "MAX_TOTAL", 10)
    (nb / "a.txt").write_text("123456")
    agent = Agent(nb, model=[answer("§§include(a.txt)+§§include(a.txt)")])
    assert agent.ask("go").text == "123456+§§include(a.txt)"
    assert "would pass" in _warnings(agent)[0]


def test_an_included_secret_is_masked(nb: Path) -> None:
    (nb / ".env").write_text("ACME_TOKEN=tok-4f9a8b7c6d5e\n")
    (nb / "log.txt").write_text("called with tok-4f9a8b7c6d5e\n")
    agent = Agent(nb, model=[answer("§§include(log.txt)")])
    text = agent.ask("go").text
    assert "tok-4f9a8b7c6d5e" not in text and "<redacted:ACME_TOKEN>" in text


def test_a_superior_gets_its_subordinate_s_alias(nb: Path) -> None:
    (nb / "sub.txt").write_text("the subordinate's findings")
    replies = [tool_reply("call_subordinate", message="find it"), answer("§§include(sub.txt)"),
               answer("The subordinate said: §§include(sub.txt)")]
    agent = Agent(nb, model=replies)
    turn = agent.ask("go")
    assert turn.text == "The subordinate said: the subordinate's findings"
    tool_result = turn.calls[-1].messages[-1]["content"]  # the superior's last request holds the tool result
    assert "§§include(sub.txt)" in tool_result and "findings" not in tool_result


def test_text_without_an_alias_is_returned_as_is() -> None:
    text = "no alias here"
    assert include_alias.expand(text, Path("/"), (), None) is text  # type: ignore[arg-type]


def test_upstream_helper_replace_file_includes() -> None:
    from a0nb.compat.helpers import strings

    note = user_home() / "note.txt"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("from home")
    assert strings.replace_file_includes("a §§include(note.txt) b §§include(/nope/x) c") == \
        "a from home b §§include(/nope/x) c"
    assert strings.replace_file_includes("") == ""
