"""Low-severity findings of issue 19 (this half): leftover `.tmp` files, a plugin name that is a path, the
Python runtime's working directory."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from a0nb import A0Error, Agent
from a0nb.testing import answer, tool_reply

REPO = Path(__file__).resolve().parents[2]


def test_a_failed_cache_write_leaves_no_tmp_file(tmp_path: Path) -> None:
    code = """
        import resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # past the limit a write fails (EFBIG), like a full disk
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, hard))
        from a0nb.engine.tokens import load_cl100k
        assert load_cl100k() is not None                 # the encoder still loads; only its cache is not written
    """
    home = tmp_path / "home"
    env = {**os.environ, "PYTHONPATH": str(REPO), "A0NB_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    left = [p.name for p in home.rglob("*") if p.is_file()]
    assert not [n for n in left if n.startswith(".") or n.endswith(".tmp")], left


def test_plugin_name_with_dots_cannot_write_outside_its_folder(nb: Path) -> None:
    plugin = nb / "plugins" / "nice"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: ../../../escaped\n")
    agent = Agent(nb)
    from a0nb.notebook.plugin_admin import PluginAdmin
    with pytest.raises(A0Error):
        PluginAdmin(agent).switch("../../../escaped", False)
    assert not (nb.parent / "escaped").exists() and not (nb / "escaped").exists()
    assert any("not a plain folder name" in d.message for d in agent.diagnostics)


def test_python_runtime_runs_in_the_agents_folder(nb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (nb / "data.txt").write_text("in the agent's folder")
    agent = Agent(nb, model=[tool_reply("code_execution", runtime="python",
                                        code="import os\nprint(os.getcwd())\nprint(open('data.txt').read())"),
                             answer("done")], settings={"approval": "auto"})
    agent.ask("where are you?")
    result = [m.text() for m in agent.history.messages() if not m.ai][-1]
    assert str(nb.resolve()) in result and "in the agent's folder" in result
    assert Path.cwd() == elsewhere  # the notebook's own working directory is given back
