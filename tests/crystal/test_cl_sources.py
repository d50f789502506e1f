"""The setting `plugin_sources`: dotted classes, `path:` folders with an `agent_plugin.json` descriptor that limits
loading to its entries, `{"path", "entry"}`, and git sources installed with pip only when remote installs are
explicitly allowed (off by default, host allowlist, pinned ref)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from a0nb import Agent
from a0nb.testing import answer
from cl_seed import block

TOOL = '''from agent_core.types import ToolPlugin


class {name}(ToolPlugin):
    def get_tool_schemas(self, state):
        return [{{"type": "function", "function": {{"name": "{tool}", "description": "{tool} files"}}}}]

    def execute_tool(self, tool_name, payload, state, **kw):
        return {{"success": True, "result": "{tool} ran"}}

    def format_tool_result(self, result, state):
        return result["result"]
'''


def _repo(root: Path, descriptor: dict[str, Any] | None) -> Path:
    """The seed's packaging example: dev_plugins/ with a reader and a writer tool, agent_plugin.json at the root."""
    pkg = root / "dev_plugins"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "file_reader_tool.py").write_text(TOOL.format(name="FileReaderTool", tool="read_file"))
    (pkg / "file_writer_tool.py").write_text(TOOL.format(name="FileWriterTool", tool="write_file"))
    if descriptor is not None:
        (root / "agent_plugin.json").write_text(json.dumps(descriptor))
    return root


def _ask(agent: Agent, tool: str) -> str | None:
    """The first call's tool result (the scripted model calls `tool`)."""
    return agent.ask("go").calls[0].tool_result


def _call(tool: str) -> str:
    return json.dumps({"tool_name": tool, "tool_args": {}})


def test_a_descriptor_limits_loading_to_its_entries(nb: Path, tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", {"entries": ["dev_plugins.file_reader_tool.FileReaderTool"], "subdirectory": "."})
    agent = Agent(nb, model=[_call("read_file"), answer("done")], settings={"plugin_sources": [f"path:{repo}"]})
    assert _ask(agent, "read_file") == "read_file ran"
    assert agent.tools.resolve("read_file") is not None and agent.tools.resolve("write_file") is None


def test_a_folder_without_descriptor_loads_every_plugin_class(nb: Path, tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", None)
    (repo / "echo_provider.py").write_text(block("EchoProvider"))
    agent = Agent(nb, model=[_call("write_file"), answer("done")], settings={"plugin_sources": ["path:../repo"]})
    assert _ask(agent, "write_file") == "write_file ran"
    assert agent.tools.resolve("read_file") is not None
    assert "echo" in agent._custom_providers()  # the seed's echo provider is a model prefix now


def test_a_single_entry_mapping(nb: Path, tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", {"entries": ["dev_plugins.file_reader_tool.FileReaderTool"]})
    source = {"path": str(repo), "entry": "dev_plugins.file_writer_tool.FileWriterTool"}
    agent = Agent(nb, model=[_call("write_file"), answer("done")], settings={"plugin_sources": [source]})
    assert _ask(agent, "write_file") == "write_file ran"
    assert agent.tools.resolve("read_file") is None  # the mapping's entry replaces the descriptor's


def test_a_dotted_class_from_the_import_path(nb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "my_cl_tools.py").write_text(TOOL.replace("agent_core.types", "a0nb.ext").format(name="Dotted", tool="dotted"))
    monkeypatch.syspath_prepend(str(lib))
    agent = Agent(nb, model=[_call("dotted"), answer("done")], settings={"plugin_sources": ["my_cl_tools.Dotted"]})
    assert _ask(agent, "dotted") == "dotted ran"


def test_the_setting_comes_from_the_project_config_too(nb: Path, tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", None)
    config = nb / ".a0proj" / "plugins" / "_model_config"
    config.mkdir(parents=True)
    (config / "config.json").write_text(json.dumps({"plugin_sources": [f"path:{repo}"]}))
    agent = Agent(nb, model=[_call("read_file"), answer("done")])
    assert _ask(agent, "read_file") == "read_file ran"


def test_a_descriptor_entry_that_does_not_exist_names_the_descriptor(nb: Path, tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", {"entries": ["dev_plugins.file_reader_tool.NoSuchTool",
                                                 "dev_plugins.missing_module.Tool"]})
    agent = Agent(nb, model=[answer("still works")], settings={"plugin_sources": [f"path:{repo}"]})
    assert agent.ask("x").text == "still works"
    problems = [d.message for d in agent.diagnostics.of("plugin-source")]
    assert any("NoSuchTool listed in" in m and "agent_plugin.json" in m and "does not exist" in m for m in problems)
    assert len(problems) == 1  # the first bad entry stops that source; other sources still load


def test_git_sources_are_refused_unless_remote_installs_are_allowed(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = "git+https://github.com/acme/ai-providers.git#v1.0.0"
    agent = Agent(nb, model=[answer("a"), answer("b")], settings={"plugin_sources": [source]})
    agent.ask("x")
    [msg] = [d.message for d in agent.diagnostics.of("plugin-source")]
    assert "remote plugin installs are off" in msg and "A0NB_ALLOW_REMOTE_PLUGINS=1" in msg
    monkeypatch.setenv("A0NB_ALLOW_REMOTE_PLUGINS", "1")
    monkeypatch.setenv("A0NB_PLUGIN_HOSTS", "gitlab.example.org")
    agent.shared.data.pop("_plugin_sources_key")
    agent.ask("y")
    [msg] = [d.message for d in agent.diagnostics.of("plugin-source")]
    assert "host 'github.com' is not in A0NB_PLUGIN_HOSTS" in msg
    monkeypatch.setenv("A0NB_PLUGIN_HOSTS", "github.com")
    unpinned = Agent(nb, model=[answer("c")],
                     settings={"plugin_sources": [{"git": "https://github.com/acme/x.git", "entry": "x.Y"}]})
    unpinned.ask("z")
    [msg] = [d.message for d in unpinned.diagnostics.of("plugin-source")]
    assert "pin a ref" in msg


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_an_allowed_git_source_installs_pinned_with_pip_target(nb: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "gitrepo", {"entries": ["dev_plugins.file_reader_tool.FileReaderTool"]})
    # the seed packages with setup.py data_files; the test environment builds with hatchling (no network, no
    # build isolation), which puts the descriptor at the install root the same way
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        '[project]\nname = "dev_plugins"\nversion = "0.0.1"\n'
        '[tool.hatch.build.targets.wheel]\npackages = ["dev_plugins"]\n'
        '[tool.hatch.build.targets.wheel.force-include]\n"agent_plugin.json" = "agent_plugin.json"\n')
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "v1"], check=True)
    subprocess.run([*git, "tag", "v1.0.0"], check=True)
    monkeypatch.setenv("A0NB_ALLOW_REMOTE_PLUGINS", "1")
    monkeypatch.setenv("A0NB_PLUGIN_HOSTS", "file")
    agent = Agent(nb, model=[_call("read_file"), answer("done")],
                  settings={"plugin_sources": [f"git+file://{repo}#v1.0.0"]})
    assert _ask(agent, "read_file") == "read_file ran", agent.diagnostics.text()
    assert agent.tools.resolve("write_file") is None  # the installed descriptor still limits the entries
    from a0nb.resources import user_home
    [marker] = list((user_home() / "cache" / "plugin_sources").glob("*/.a0nb-installed"))
    assert marker.read_text().strip().endswith("#v1.0.0")
