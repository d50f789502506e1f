"""Agent Zero's module names: resolved for the files a0nb loads without shadowing a user's own `helpers`
or `agent` module, and process-wide after `import a0nb.compat` (upstream's own tests run unmodified)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.testing import answer, tool_reply

sys.path.insert(0, str(Path(__file__).parent))
from corpus_judge import find_corpus  # noqa: E402

CORPUS = find_corpus()
REPO = Path(__file__).resolve().parents[2]

UPSTREAM_STYLE_TOOL = '''
from helpers.tool import Tool, Response
from helpers.print_style import PrintStyle
from agent import Agent


class Shout(Tool):
    async def execute(self, text="", **kwargs):
        assert isinstance(self.agent, Agent)
        self.agent.set_data("shouted", text.upper())
        return Response(message=f"{self.agent.agent_name} shouts {text.upper()}", break_loop=False)
'''

USER_HELPERS = '''
def greet(name):
    return f"hello {name} from the user's own helpers"
'''

USER_TOOL = '''
from helpers import greet


def greet_tool(name: str) -> str:
    """Greets with the user's helpers module."""
    return greet(name)
'''


def test_user_helpers_module_keeps_working_next_to_upstream_files(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(nb))  # as in a kernel started in the notebook folder
    (nb / "helpers.py").write_text(USER_HELPERS, encoding="utf-8")
    (nb / "agent.py").write_text("OWN = 'the user agent module'\n", encoding="utf-8")
    (nb / "tools").mkdir()
    (nb / "tools" / "shout.py").write_text(UPSTREAM_STYLE_TOOL, encoding="utf-8")
    (nb / "tools" / "greet_tool.py").write_text(USER_TOOL, encoding="utf-8")
    agent = Agent(nb, model=[tool_reply("shout", text="hi"), tool_reply("greet_tool", name="Ada"), answer("done")])
    turn = agent.ask("go")
    assert turn.text == "done"
    results = [m.content for m in agent.history.messages() if m.kind == "tool_result"]
    assert results[0]["tool_result"] == "A0 shouts HI"  # upstream names: helpers.tool, agent.Agent
    assert results[1]["tool_result"] == "hello Ada from the user's own helpers"  # the user's helpers.py
    assert agent.data["shouted"] == "HI"
    assert sys.modules["helpers"].greet("Cy") == "hello Cy from the user's own helpers"
    sys.modules.pop("helpers", None)  # the user's module, imported by their tool: gone with this test's folder
    # the user's own modules, imported as a notebook cell would
    code = "import helpers, agent; print(helpers.greet('Bo')); print(agent.OWN)"
    out = subprocess.run([sys.executable, "-c", code], cwd=nb, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": f"{nb}{os.pathsep}{REPO}"}, check=True).stdout
    assert out.splitlines() == ["hello Bo from the user's own helpers", "the user agent module"]


def test_import_a0nb_compat_makes_names_importable_but_never_shadows(tmp_path: Path) -> None:
    code = textwrap.dedent("""
        import a0nb.compat
        from helpers.print_style import PrintStyle
        import python.helpers.files as older
        import helpers.files
        from agent import Agent, AgentContext, LoopData, UserMessage
        from initialize import initialize_agent
        assert older is helpers.files
        print(PrintStyle.__module__, LoopData(iteration=3).iteration, initialize_agent().profile == "")
        import helpers as h
        print(h.__name__)
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO), "A0NB_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["a0nb.compat.helpers.print_style 3 True", "a0nb.compat.helpers"]
    (tmp_path / "helpers.py").write_text("MINE = 1\n", encoding="utf-8")
    mine = subprocess.run([sys.executable, "-c", "import a0nb.compat, helpers; print(helpers.MINE)"], cwd=tmp_path,
                          capture_output=True, text=True, env={**env, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"})
    assert mine.returncode == 0, mine.stderr
    assert mine.stdout.strip() == "1"


@pytest.mark.skipif(CORPUS is None, reason="the upstream corpus is not here")
def test_upstream_unit_tests_pass_unmodified(tmp_path: Path) -> None:
    """Agent Zero's own tests (dirty JSON, print style, @extensible with Agent/AgentContext, streamed early stop)."""
    assert CORPUS is not None
    folder = tmp_path / "upstream"
    shutil.copytree(CORPUS / "tests", folder / "tests")
    env = {**os.environ, "PYTHONPATH": str(REPO), "A0NB_HOME": str(tmp_path / "home")}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "a0nb.compat", "-p", "no:cacheprovider",
                          "tests"], cwd=folder, capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "failed" not in run.stdout
    assert len(list((folder / "tests").glob("test_*.py"))) == 4
