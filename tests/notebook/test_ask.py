"""The ask path's failures as a front end shows them: with no model configured the live view turns into
one accurate error (no transcript, no charts), and a turn that got replies keeps its card."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

from a0nb.inspector import render_turn
from a0nb.notebook.magics import A0Magics, get_magics
from a0nb.providers.registry import no_model_message
from a0nb.testing import answer
from test_magics import dispose, make_shell  # type: ignore[import-not-found]


@pytest.fixture
def front_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    """A shell whose magic believes a front end is attached: the live view (real ipywidgets) is used."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(A0Magics, "interactive", lambda self: True)
    sh = make_shell()
    sh.run_line_magic("load_ext", "a0nb")
    sh.run_line_magic("config", 'A0.approval = "auto"')
    yield sh
    sh.run_line_magic("unload_ext", "a0nb")
    dispose()


def final_outputs(shell: InteractiveShell) -> list[dict[str, Any]]:
    """What the saved cell holds: each display id's last update, plus plain outputs, in order."""
    out: list[dict[str, Any]] = []
    where: dict[str, int] = {}
    for o in shell.display_pub.outputs:
        display_id = (o.get("transient") or {}).get("display_id")
        if display_id in where:
            out[where[display_id]] = o
            continue
        if display_id:
            where[display_id] = len(out)
        out.append(o)
    return out


def test_no_model_error_appears_once_in_a_front_end(front_end: InteractiveShell) -> None:
    front_end.run_line_magic("a0", "ask hello")
    [only] = final_outputs(front_end)
    text, html = only["data"]["text/plain"], only["data"]["text/html"]
    assert text == "ConfigError: " + no_model_message().splitlines()[0]
    assert "%a0 model" in text and "valid tool request" not in text and "model call" not in text
    assert "<svg" not in html and "data:image" not in html
    assert only["metadata"]["a0"]["error"] == "ConfigError"
    assert get_magics(front_end).agent.history.validate() == []  # history stays consistent
    (Path.cwd() / "r.yaml").write_text(json.dumps([answer("now it works")]), encoding="utf-8")
    front_end.run_line_magic("a0", "model scripted:r.yaml")
    front_end.run_line_magic("a0", "ask hello again")
    texts = [o["data"].get("text/plain", "") for o in final_outputs(front_end)]
    assert "now it works" in texts[-2], texts  # the card, then the footer


def test_a_turn_s_own_model_applies_in_a_front_end(front_end: InteractiveShell) -> None:
    """`%a0 ask --model X` with the live view: the view's start wrote the `%config` layer into the agent again,
    without the turn's model, so the turn said no model was configured (found in JupyterLab)."""
    (Path.cwd() / "r.yaml").write_text(json.dumps([answer("from the turn's own model")]), encoding="utf-8")
    front_end.run_line_magic("a0", "ask --model scripted:r.yaml hello")
    texts = [o["data"].get("text/plain", "") for o in final_outputs(front_end)]
    assert any("from the turn's own model" in t for t in texts), texts
    assert not any("ConfigError" in t for t in texts)
    assert get_magics(front_end).agent.settings.model != "scripted:r.yaml"  # (undone after the turn)


def test_a_turn_that_never_got_a_reply_renders_without_charts(tmp_path: Path) -> None:
    from a0nb import Agent
    from a0nb.errors import ConfigError
    agent = Agent(tmp_path)
    with pytest.raises(ConfigError):
        agent.ask("hello")
    rendering = render_turn(agent.turns[-1], agent=agent)
    assert "<svg" not in rendering.html and "Model calls" not in rendering.html
    assert "no reply" in rendering.text and "valid tool request" not in rendering.text


def test_footer_latency_is_the_turns_wall_time_tools_included(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from a0nb.testing import tool_reply
    monkeypatch.chdir(tmp_path)
    sh = make_shell()
    try:
        sh.run_line_magic("load_ext", "a0nb")
        replies = [tool_reply("code_execution", runtime="python", code="import time; time.sleep(0.3)"), answer("done")]
        (tmp_path / "r.yaml").write_text(json.dumps(replies), encoding="utf-8")
        sh.run_line_magic("config", 'A0.model = "scripted:r.yaml"')
        sh.run_line_magic("config", 'A0.approval = "auto"')
        sh.run_line_magic("a0", "ask take your time")
        footer = sh.display_pub.outputs[-1]["data"]["text/plain"].splitlines()[0]
        latency = float(footer.split(" · ")[3][:-2])
        calls = get_magics(sh).agent.turns[-1].calls
        assert sum(c.latency or 0 for c in calls) < 0.3 <= latency
    finally:
        sh.run_line_magic("unload_ext", "a0nb")
        dispose()


def test_a_replayed_footer_names_the_recorded_model_as_replayed(tmp_path: Path) -> None:
    from a0nb import Agent
    from a0nb.inspector import render_footer
    (tmp_path / "r.yaml").write_text(json.dumps([answer("hi")]), encoding="utf-8")
    Agent(tmp_path, model="record:c.yaml:scripted:r.yaml").ask("hello")
    agent = Agent(tmp_path, model="replay:c.yaml")
    turn = agent.ask("hello")
    footer = render_footer(agent, turn)
    assert footer is not None
    assert footer.text.splitlines()[0].endswith(" · scripted:r.yaml (replayed)")
