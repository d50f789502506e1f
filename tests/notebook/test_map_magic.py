"""`%a0 map VAR "template"` in a real InteractiveShell: results stored, one summary table linking every item
to its turn card, a progress line in a front end, the interrupt keeping finished items, errors as one line."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from a0nb.notebook.commands import batch
from a0nb.notebook.magics import get_magics
from a0nb.testing import answer, tool_reply
from test_magics import dispose, make_shell  # type: ignore[import-not-found]

CITIES = {"Oslo": "Norway", "Lima": "Peru", "Rome": "Italy"}


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / ".ipython"))
    replies = [{"when": f"is {c} in", "content": answer(country)} for c, country in CITIES.items()]
    replies.append({"when": "is Atlantis in", "error": "auth"})
    (tmp_path / "replies.yaml").write_text(yaml.safe_dump(replies))
    sh = make_shell()
    sh.run_line_magic("load_ext", "a0nb")
    sh.run_line_magic("a0", "model scripted:replies.yaml")
    sh.user_ns["cities"] = list(CITIES) + ["Atlantis"]
    yield sh
    sh.run_line_magic("unload_ext", "a0nb")
    dispose()


def shown(sh: InteractiveShell) -> dict[str, Any]:
    return sh.display_pub.outputs[-1]


def test_map_stores_the_results_and_shows_one_linked_summary(shell: InteractiveShell) -> None:
    shell.run_line_magic("a0", 'map -c 2 -o answers cities "Which country is {item} in?"')
    result = shell.user_ns["answers"]
    assert result.texts[:3] == list(CITIES.values()) and result.failed == [3]
    out = shown(shell)
    text, page = out["data"]["text/plain"], out["data"]["text/html"]
    assert text.splitlines()[0] == "4 items · 3 ok · 1 failed · executor threads"
    assert "  0  ok          Oslo" in text and "  3  failed      Atlantis" in text
    for i in range(4):
        assert f'href="#a0-answers-{i}"' in page and f'id="a0-answers-{i}"' in page
    assert "authentication failed" in page and "Which country is Rome in?" in page  # the item cards are there
    assert out["metadata"]["a0"]["items"] == 4 and "elapsed" in out["metadata"]["a0"]
    assert "elapsed" not in text and "$" not in text  # volatile figures stay in the metadata


def test_without_o_the_results_go_to_a0map(shell: InteractiveShell) -> None:
    shell.run_line_magic("a0", 'map cities "Where is {item}?"')
    assert len(shell.user_ns["_a0map"]) == 4


def test_bad_input_is_one_line(shell: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="no variable named 'towns'"):
        shell.run_line_magic("a0", 'map towns "Where is {item}?"')
    with pytest.raises(UsageError, match="%a0 map: the following arguments are required: template"):
        shell.run_line_magic("a0", "map cities")
    shell.run_line_magic("a0", 'map cities "Where is it?"')
    assert shown(shell)["data"]["text/plain"].startswith("ConfigError: map: the template has no {item} placeholder")
    shell.user_ns["nothing"] = []
    shell.run_line_magic("a0", 'map nothing "Where is {item}?"')
    assert shown(shell)["data"]["text/plain"] == "ConfigError: map: items is empty; there is nothing to run"


def test_a_front_end_sees_a_progress_line_and_the_interrupt_keeps_finished_items(
        shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    (Path.cwd() / "tools").mkdir()
    (Path.cwd() / "tools" / "nap.py").write_text(
        'import asyncio\n\nasync def nap() -> str:\n    """Wait."""\n    await asyncio.sleep(30)\n    return "rested"\n')
    replies = [{"when": "is Oslo in", "content": answer("Norway")}]
    replies += [{"when": f"is {c} in", "content": tool_reply("nap")} for c in ("Lima", "Rome", "Atlantis")]
    (Path.cwd() / "replies.yaml").write_text(yaml.safe_dump(replies))
    magics = get_magics(shell)
    monkeypatch.setattr(magics, "interactive", lambda: True)
    lines: list[str] = []
    draw = batch.ProgressLine.__call__

    def ctrl_c_after_oslo(self: Any, progress: Any, final: bool = False) -> None:
        draw(self, progress, final)
        lines.append(progress.line())
        if progress.done == 1 and not final and not any("interrupt" in x for x in lines):
            lines.append("interrupt")
            raise KeyboardInterrupt

    monkeypatch.setattr(batch.ProgressLine, "__call__", ctrl_c_after_oslo)
    shell.run_line_magic("a0", 'map -c 2 cities "Which country is {item} in?"')
    result = shell.user_ns["_a0map"]
    assert result.interrupted and result.texts[0] == "Norway" and result.failed == [1, 2, 3]
    assert shown(shell)["data"]["text/plain"].splitlines()[0] == (
        "4 items · 1 ok · 3 failed · interrupted (finished items kept) · executor threads")
    assert lines[0].startswith("0/4 · 0 done · 0 failed · 1 running · ETA ? · $0.0000")
    assert lines[-1].startswith("4/4 · 1 done · 3 failed · 0 running")
    updates = [o for o in shell.display_pub.outputs if o["data"].get("text/html", "").startswith("<progress")]
    assert updates and 'value="4" max="4"' in updates[-1]["data"]["text/html"]


def test_help_lists_map(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("a0", "help")
    assert '%a0 map [-c N]' in capsys.readouterr().out + str(shell.display_pub.outputs)
