"""Plugins' UI elements in the notebook: the bundled usage footer and status line under each answer,
`%a0 plugins` (list, enable/disable with scopes, config shown and set), the config form widget, a user
plugin declaring its own elements, and bad elements going to diagnostics."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

from a0nb.notebook.magics import get_magics
from a0nb.testing import answer
from a0nb.inspector.ui_elements import ui_elements

from test_magics import dispose, make_shell  # type: ignore[import-not-found]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / ".ipython"))
    (tmp_path / "replies.yaml").write_text(json.dumps([answer(f"answer {i}") for i in range(6)]))
    return tmp_path


@pytest.fixture
def shell(folder: Path) -> Iterator[InteractiveShell]:
    sh = make_shell()
    sh.run_line_magic("load_ext", "a0nb")
    sh.run_line_magic("a0", "model scripted:replies.yaml")
    yield sh
    sh.run_line_magic("unload_ext", "a0nb")
    dispose()


def outputs(shell: InteractiveShell) -> list[dict[str, Any]]:
    return shell.display_pub.outputs


def text(shell: InteractiveShell) -> str:
    return outputs(shell)[-1]["data"]["text/plain"]


def test_each_answer_gets_the_footer_and_the_status_line(shell: InteractiveShell) -> None:
    shell.run_line_magic("a0", "ask hello")
    answer_out, footer_out = outputs(shell)[-2:]
    assert "answer 0" in answer_out["data"]["text/plain"]
    footer, status = footer_out["data"]["text/plain"].splitlines()
    agent = get_magics(shell).agent
    record = agent.calls[-1]
    tokens, cached, cost, latency, model = footer.split(" · ")
    assert (tokens, cached, cost, model) == (f"{record.usage['total_tokens']:,} tokens", "0 cached", "$0.0000",
                                             "scripted:replies.yaml")
    assert latency.endswith(" s") and float(latency[:-2]) >= round(record.latency, 2)  # the turn's wall time
    assert status.startswith("scripted:replies.yaml · context ") and status.endswith(" of 128k · idle · session $0.0000")
    assert 'class="a0-footer"' in footer_out["data"]["text/html"] and 'class="a0-status"' in footer_out["data"]["text/html"]
    assert footer_out["metadata"]["a0"]["footer"] == [footer]


def test_no_footer_for_other_answer_formats(shell: InteractiveShell) -> None:
    shell.run_line_magic("a0", "ask -f text hello")
    assert outputs(shell)[-1]["data"] == {"text/plain": "answer 0"}


def test_plugins_list_switch_and_scopes(shell: InteractiveShell, folder: Path, _isolated_home: Path) -> None:
    shell.run_line_magic("a0", "plugins")
    listing = text(shell)
    assert "usage_footer: on (bundled)" in listing and "[ui: message_footer, status_bar, config]" in listing
    assert "notebook_context: off (bundled)" in listing

    shell.run_line_magic("a0", "plugins disable usage_footer")
    assert (folder / ".a0proj" / "plugins" / "usage_footer" / ".toggle-0").is_file()
    shell.run_line_magic("a0", "ask hello")
    assert "footer" not in outputs(shell)[-1]["metadata"].get("a0", {})  # off at once, no restart

    shell.run_line_magic("a0", "plugins enable usage_footer")
    assert not (folder / ".a0proj" / "plugins" / "usage_footer" / ".toggle-0").exists()
    shell.run_line_magic("a0", "ask again")
    assert "footer" in outputs(shell)[-1]["metadata"]["a0"]

    shell.run_line_magic("a0", "plugins enable notebook_context --scope user")
    assert (_isolated_home / "plugins" / "notebook_context" / ".toggle-1").is_file()
    agent = get_magics(shell).agent
    assert any(r.plugin == "notebook_context" for r in agent.paths)

    shell.run_line_magic("a0", "plugins enable no_such_plugin")
    assert text(shell).startswith("ConfigError: no plugin named 'no_such_plugin'")


def test_config_is_shown_and_set_through_the_config_element(shell: InteractiveShell, folder: Path) -> None:
    shell.run_line_magic("a0", "plugins config usage_footer")
    shown = text(shell)
    assert "footer = tokens,cached_tokens,cost,latency,model" in shown and "status = model,context,tool,cost" in shown

    shell.run_line_magic("a0", "plugins config usage_footer footer=tokens,calls status=model,turns")
    saved = json.loads((folder / ".a0proj" / "plugins" / "usage_footer" / "config.json").read_text())
    assert saved == {"footer": ["tokens", "calls"], "status": ["model", "turns"]}
    shell.run_line_magic("a0", "ask hello")
    record = get_magics(shell).agent.calls[-1]
    assert text(shell) == f"{record.usage['total_tokens']:,} tokens · 1 call\nscripted:replies.yaml · 1 turn"

    for bad, message in (("footer=bogus", "bogus not among"), ("colour=red", "has no setting 'colour'"),
                         ("footer", "write key=value")):
        shell.run_line_magic("a0", f"plugins config usage_footer {bad}")
        assert text(shell).startswith("ConfigError") and message in text(shell)
    assert json.loads((folder / ".a0proj" / "plugins" / "usage_footer" / "config.json").read_text()) == saved


def test_the_config_form_saves_what_the_widgets_hold(shell: InteractiveShell, folder: Path) -> None:
    from a0nb.notebook.plugin_admin import PluginAdmin
    form = PluginAdmin(get_magics(shell).agent).form("usage_footer")
    assert [f.name for f in form.fields] == ["footer", "status"]
    footer_input = form.inputs["footer"]
    assert footer_input.options == ("tokens", "cached_tokens", "cost", "latency", "model", "calls")
    footer_input.value = ("cost", "model")
    form.button.click()
    saved = json.loads((folder / ".a0proj" / "plugins" / "usage_footer" / "config.json").read_text())
    assert saved["footer"] == ["cost", "model"] and "saved to ./.a0proj/plugins/usage_footer/config.json" in form.message.value


_USER_FEATURE = '''
class Budget:
    def get_ui_elements(self, config, tags, models):
        return [{"type": "message_footer", "fields": ["calls", "model"]},
                {"type": "status_bar", "fields": ["turns", "nonsense"]},
                {"type": "sparkles"},
                {"type": "config", "fields": {"limit": {"type": "number", "label": "budget", "help": "USD"}}}]
'''


def test_a_user_plugin_declares_its_own_elements(shell: InteractiveShell, folder: Path) -> None:
    plugin = folder / "plugins" / "budget"
    (plugin / "features").mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: budget\ntitle: Budget\n")
    (plugin / "default_config.yaml").write_text("limit: 1.5\n")
    (plugin / "features" / "budget.py").write_text(_USER_FEATURE)
    shell.run_line_magic("a0", "ask hello")
    lines = text(shell).splitlines()
    assert "1 call · scripted:replies.yaml" in lines and "1 turn" in lines
    agent = get_magics(shell).agent
    assert [e.kind for e in ui_elements(agent) if e.plugin == "budget"] == ["message_footer", "status_bar", "config"]
    problems = " ".join(d.message for d in agent.diagnostics)
    assert "unknown element" in problems and "sparkles" in problems and "nonsense" in problems
    shell.run_line_magic("a0", "plugins config budget limit=2.25")
    assert json.loads((folder / ".a0proj" / "plugins" / "budget" / "config.json").read_text()) == {"limit": 2.25}
    shell.run_line_magic("a0", "plugins config budget limit=lots")
    assert "limit takes a number" in text(shell)


def test_a_failing_get_ui_elements_is_a_diagnostic_and_the_answer_still_shows(shell: InteractiveShell,
                                                                               folder: Path) -> None:
    (folder / "features").mkdir()
    (folder / "features" / "broken.py").write_text("class Broken:\n    def get_ui_elements(self, c, t, m):\n"
                                                   "        raise RuntimeError('no ui today')\n")
    shell.run_line_magic("a0", "ask hello")
    assert "answer 0" in outputs(shell)[-2]["data"]["text/plain"]
    assert any("no ui today" in d.message for d in get_magics(shell).agent.diagnostics)
