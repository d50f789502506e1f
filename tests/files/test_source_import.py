"""files/source_import: a user's Python files run from their source text, with Python's bytecode writing on
as in a user's kernel (the test environment may switch it off: PYTHONDONTWRITEBYTECODE). An edit saved within
the same second at the same size runs the new code; a planted `__pycache__` file never runs instead of the
source the user read; nothing is written beside the files. Tools, extensions, variables loaders, Agent Zero's
`load_classes_from_file` and `plugin_sources` folders (with their packages' own imports) all load this way."""
from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import sys
import time
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.testing import answer, tool_reply

TOOL = """from a0nb import Response, Tool


class Probe(Tool):
    async def execute(self, **kwargs):
        return Response(message="{word}", break_loop=False)
"""

LOADER = """from a0nb import VariablesPlugin


class Word(VariablesPlugin):
    def get_variables(self, file, backup_dirs=None, **kwargs):
        return {{"word": "{word}"}}
"""

CL_TOOL = """from agent_core.types import ToolPlugin
from .{helper} import WORD


class Probe(ToolPlugin):
    def get_tool_schemas(self, state):
        return [{{"type": "function", "function": {{"name": "probe", "description": "probe"}}}}]

    def execute_tool(self, tool_name, payload, state, **kw):
        return {{"success": True, "result": WORD}}

    def format_tool_result(self, result, state):
        return result["result"]
"""


@pytest.fixture(autouse=True)
def bytecode_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def _plant(source: Path, text: str) -> Path:
    """A bytecode file for `source` compiled from other `text`, in unchecked-hash mode (PEP 552: Python's loader
    runs it without looking at the source), where Python's loader would look for it."""
    decoy = source.with_name("decoy_src.py.txt")
    decoy.write_text(text)
    cache = Path(importlib.util.cache_from_source(str(source)))
    cache.parent.mkdir(exist_ok=True)
    py_compile.compile(str(decoy), cfile=str(cache), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    decoy.unlink()
    return cache


def _probe(agent: Agent) -> str | None:
    return agent.ask("go").calls[0].tool_result


def _caches(folder: Path) -> list[Path]:
    return sorted(folder.rglob("__pycache__"))


def test_a_planted_bytecode_file_never_runs_instead_of_a_tool_source(nb: Path) -> None:
    tool = nb / "tools" / "probe.py"
    tool.parent.mkdir()
    tool.write_text(TOOL.format(word="from the source"))
    _plant(tool, TOOL.format(word="PLANTED"))
    agent = Agent(nb, model=[tool_reply("probe"), answer("done")])
    assert _probe(agent) == "from the source"


def test_an_edit_in_the_same_second_at_the_same_size_runs_the_new_code(nb: Path) -> None:
    second = (int(time.time()) - 100) * 1_000_000_000  # (a whole second: Python's bytecode check compares seconds)
    tool = nb / "tools" / "probe.py"
    tool.parent.mkdir()
    tool.write_text(TOOL.format(word="one"))
    os.utime(tool, ns=(second + 100_000_000,) * 2)
    agent = Agent(nb, model=[tool_reply("probe"), answer("done")] * 2)
    assert _probe(agent) == "one"
    tool.write_text(TOOL.format(word="two"))  # the same size, saved in the same second
    os.utime(tool, ns=(second + 200_000_000,) * 2)
    assert _probe(agent) == "two"


def test_a_variables_loader_runs_from_its_source(nb: Path) -> None:
    prompts = nb / "prompts"
    prompts.mkdir()
    (prompts / "agent.system.main.role.md").write_text("The word is {{word}}.")
    loader = prompts / "agent.system.main.role.py"
    loader.write_text(LOADER.format(word="source"))
    _plant(loader, LOADER.format(word="PLANTED"))
    turn = Agent(nb, model=[answer("done")]).ask("go")
    system = str(turn.calls[0].messages[0]["content"])
    assert "The word is source." in system and "PLANTED" not in system


def test_nothing_is_written_beside_the_users_files(nb: Path) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "probe.py").write_text(TOOL.format(word="x"))
    (nb / "prompts").mkdir()
    (nb / "prompts" / "agent.system.main.role.md").write_text("{{word}}")
    (nb / "prompts" / "agent.system.main.role.py").write_text(LOADER.format(word="y"))
    ext = nb / "extensions" / "message_loop_prompts_after" / "_50_mine.py"
    ext.parent.mkdir(parents=True)
    ext.write_text("from a0nb import Extension\n\n\nclass Mine(Extension):\n    def execute(self, **kwargs):\n"
                   "        pass\n")
    agent = Agent(nb, model=[tool_reply("probe"), answer("done")])
    assert _probe(agent) == "x"
    assert _caches(nb) == []


def test_an_installed_file_reads_its_install_time_cache_and_writes_none(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The installation's own folders are watched by the hierarchy as well: a cache written there on first import
    (a checkout, where nothing compiled them at install) changed their mtime mid-session, which read as an edit."""
    from a0nb.diagnostics import Diagnostics
    from a0nb.files import loader as loader_mod
    from a0nb.files.loader import InstalledModules, ModuleLoader
    folder = tmp_path / "install" / "extensions" / "message_loop_start"
    folder.mkdir(parents=True)
    monkeypatch.setattr(loader_mod, "installed", lambda path: path.startswith(str(tmp_path / "install")))
    fresh, compiled = folder / "_10_fresh.py", folder / "_20_compiled.py"
    for path in (fresh, compiled):
        path.write_text("WORD = 'source'\n")
    planted = _plant(compiled, "WORD = 'compiled at install'\n")  # (Python's loader runs a cache like this one)
    os.utime(folder, ns=(10**18,) * 2)
    loader = ModuleLoader(Diagnostics(), shared=InstalledModules())
    assert loader.load(fresh, "extensions.message_loop_start._10_fresh", "extension").WORD == "source"
    assert loader.load(compiled, "extensions.message_loop_start._20_compiled", "extension").WORD == \
        "compiled at install"
    assert list(planted.parent.iterdir()) == [planted] and folder.stat().st_mtime_ns == 10**18  # nothing written


def test_agent_zeros_load_classes_from_file_reads_the_source(nb: Path) -> None:
    from a0nb.compat.helpers.extract_tools import load_classes_from_file
    from a0nb import Tool

    tool = nb / "probe.py"
    tool.write_text(TOOL.format(word="source"))
    _plant(tool, TOOL.format(word="PLANTED").replace("class Probe", "class Planted"))
    (cls,) = load_classes_from_file(str(tool), Tool)
    assert cls.__name__ == "Probe"


def test_a_plugin_folders_packages_import_their_modules_from_source(nb: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    pkg = repo / "probe_plugins"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "probe_tool.py").write_text(CL_TOOL.format(helper="words"))
    (pkg / "words.py").write_text('WORD = "from the source"\n')
    planted = [_plant(pkg / "words.py", 'WORD = "PLANTED"\n'),  # imported by the plugin's own `from .words import`
               _plant(pkg / "probe_tool.py", CL_TOOL.format(helper="words").replace("WORD}", "'PLANTED'}"))]
    agent = Agent(nb, model=[json.dumps({"tool_name": "probe", "tool_args": {}}), answer("done")],
                  settings={"plugin_sources": [f"path:{repo}"]})
    assert _probe(agent) == "from the source"
    assert sorted((pkg / "__pycache__").iterdir()) == sorted(planted)  # (and nothing written: no __init__'s)


def test_a_namespace_package_in_a_plugin_folder_still_imports_from_source(nb: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    pkg = repo / "loose_plugins"  # no __init__.py: a namespace package
    pkg.mkdir(parents=True)
    (pkg / "probe_tool.py").write_text(CL_TOOL.format(helper="words").replace("from .words import WORD",
                                                                             "WORD = 'from the source'"))
    _plant(pkg / "probe_tool.py", CL_TOOL.format(helper="words").replace("from .words import WORD", "WORD = 'PLANTED'"))
    (repo / "agent_plugin.json").write_text(json.dumps({"entries": ["loose_plugins.probe_tool.Probe"]}))
    agent = Agent(nb, model=[json.dumps({"tool_name": "probe", "tool_args": {}}), answer("done")],
                  settings={"plugin_sources": [f"path:{repo}"]})
    assert _probe(agent) == "from the source"
