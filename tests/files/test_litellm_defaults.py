"""Files a0nb loads may import litellm themselves (Agent Zero's do: the `_error_retry` plugin has `import litellm`
at its top). litellm then fetches its price map from GitHub while it is imported and logs each failure into the
cell, unless LITELLM_LOCAL_MODEL_COST_MAP is set; a0nb sets it (unless the user set it either way) before it
runs any such file: a tool or extension, a prompt's variables loader, a `plugin_sources` package. Each file
here records the variable as its module body saw it (litellm itself is not imported)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.testing import answer

VAR = "LITELLM_LOCAL_MODEL_COST_MAP"
SEEN = """import os
SEEN = os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP")
"""
TOOL = SEEN + """from a0nb import Response, Tool


class Probe(Tool):
    async def execute(self, **kwargs):
        return Response(message=f"seen {SEEN}", break_loop=False)
"""
LOADER = SEEN + """from a0nb import VariablesPlugin


class Word(VariablesPlugin):
    def get_variables(self, file, backup_dirs=None, **kwargs):
        return {"word": f"seen {SEEN}"}
"""
CL_TOOL = SEEN + """from agent_core.types import ToolPlugin


class Probe(ToolPlugin):
    def get_tool_schemas(self, state):
        return [{"type": "function", "function": {"name": "probe", "description": "probe"}}]

    def execute_tool(self, tool_name, payload, state, **kw):
        return {"success": True, "result": f"seen {SEEN}"}

    def format_tool_result(self, result, state):
        return result["result"]
"""
CALL = json.dumps({"tool_name": "probe", "tool_args": {}})


@pytest.fixture
def unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VAR, raising=False)  # (tests/conftest.py sets it for the whole suite)


def test_a_tool_file_is_imported_with_the_local_price_map_set(nb: Path, unset: None) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "probe.py").write_text(TOOL)
    turn = Agent(nb, model=[CALL, answer("done")]).ask("go")
    assert turn.calls[0].tool_result == "seen True"


def test_a_variables_loader_is_imported_with_the_local_price_map_set(nb: Path, unset: None) -> None:
    prompts = nb / "prompts"
    prompts.mkdir()
    (prompts / "agent.system.main.role.md").write_text("The word is {{word}}.")
    (prompts / "agent.system.main.role.py").write_text(LOADER)
    turn = Agent(nb, model=[answer("done")]).ask("go")
    assert "The word is seen True." in str(turn.calls[0].messages[0]["content"])


def test_a_plugin_source_package_is_imported_with_the_local_price_map_set(nb: Path, tmp_path: Path,
                                                                          unset: None) -> None:
    pkg = tmp_path / "repo" / "env_probe_plugins"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "probe_tool.py").write_text(CL_TOOL)
    agent = Agent(nb, model=[CALL, answer("done")], settings={"plugin_sources": [f"path:{tmp_path / 'repo'}"]})
    assert agent.ask("go").calls[0].tool_result == "seen True"


def test_the_users_own_choice_is_kept(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, "False")  # the user wants litellm's remote price map
    (nb / "tools").mkdir()
    (nb / "tools" / "probe.py").write_text(TOOL)
    assert Agent(nb, model=[CALL, answer("done")]).ask("go").calls[0].tool_result == "seen False"
