"""Agent Zero's application points at their notebook equivalents (issue 17, item 7): start-up and `banners`
at `%load_ext a0nb`, `user_message_ui` before `%a0 ask` starts the turn, `job_loop` after a cell (once a minute)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import yaml
from IPython.core.interactiveshell import InteractiveShell

from a0nb.notebook.app_points import JOB_LOOP_SECONDS
from a0nb.notebook.magics import get_magics
from a0nb.testing import answer
from test_magics import dispose, make_shell  # type: ignore[import-not-found]

BANNER = '''
from a0nb.ext import Extension


class Welcome(Extension):
    async def execute(self, banners=None, frontend_context=None, **kwargs):
        assert self.agent is None  # no agent, as Agent Zero fires it
        banners.append({"id": "b1", "type": "warning", "priority": 10, "title": "Low disk",
                        "html": "Only <b>2 GB</b> left on " + frontend_context["hostname"]})
        banners.append({"id": "b2", "type": "info", "priority": 90, "title": "Hello", "html": "first"})
'''

STARTED = '''
from a0nb.ext import Extension


class Started(Extension):
    def execute(self, **kwargs):
        open("started.txt", "a").write("init_a0 end\\n")
'''

REWRITE = '''
from helpers.extension import Extension


class Rewrite(Extension):
    async def execute(self, data: dict = {}, **kwargs):
        data["message"] = data["message"].upper() + " (via ui)"
'''

TICK = '''
from a0nb.ext import Extension


class Tick(Extension):
    def execute(self, **kwargs):
        open("ticks.txt", "a").write("tick\\n")
'''


def _put(folder: Path, rel: str, text: str) -> None:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / ".ipython"))
    script = tmp_path.parent / f"{tmp_path.name}-replies.yaml"
    script.write_text(yaml.safe_dump([{"content": answer("done")}] * 3), encoding="utf-8")
    monkeypatch.setenv("A0NB_MODEL", f"scripted:{script}")
    return tmp_path


def _load(folder: Path) -> Iterator[InteractiveShell]:
    shell = make_shell()
    shell.run_line_magic("load_ext", "a0nb")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "a0nb")
        dispose()


def test_load_ext_fires_start_up_and_shows_banners_highest_priority_first(folder: Path) -> None:
    _put(folder, "extensions/banners/_10_welcome.py", BANNER)
    _put(folder, "extensions/_functions/__main__/init_a0/end/_10_started.py", STARTED)
    _put(folder, "extensions/startup_migration/_10_migrate.py", STARTED.replace("init_a0 end", "migrated"))
    for shell in _load(folder):
        texts = [o["data"].get("text/plain", "") for o in shell.display_pub.outputs]
        assert texts[:2] == ["a0 info: Hello: first", "a0 warning: Low disk: Only 2 GB left on localhost"]
        assert "<b>2 GB</b>" in shell.display_pub.outputs[1]["data"]["text/html"]
        assert (folder / "started.txt").read_text() == "migrated\ninit_a0 end\n"
        assert shell.magics_manager.registry["A0Magics"]._agent is None  # no agent was built for it


def test_a_failing_banner_extension_is_one_line_and_load_ext_still_works(folder: Path) -> None:
    _put(folder, "extensions/banners/_10_broken.py",
         "from a0nb.ext import Extension\nclass B(Extension):\n    def execute(self, **kw):\n        raise KeyError('x')\n")
    for shell in _load(folder):
        texts = [o["data"].get("text/plain", "") for o in shell.display_pub.outputs]
        assert len(texts) == 1 and "extension point banners failed" in texts[0] and "_10_broken" in texts[0]
        assert get_magics(shell) is not None


def test_user_message_ui_rewrites_the_message_of_a0_ask_only(folder: Path) -> None:
    _put(folder, "extensions/user_message_ui/_10_rewrite.py", REWRITE)
    for shell in _load(folder):
        shell.run_cell("%a0 ask hello there")
        agent = get_magics(shell).agent
        assert agent.turns[-1].message == "HELLO THERE (via ui)"
        assert "HELLO THERE (via ui)" in str(agent.calls[-1].messages)
        agent.ask("from python")  # not a UI message: untouched, as upstream's API path
        assert agent.turns[-1].message == "from python"


def test_job_loop_ticks_after_a_cell_at_most_once_a_minute(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _put(folder, "extensions/job_loop/_50_tick.py", TICK)
    now = [1000.0]
    monkeypatch.setattr("a0nb.notebook.app_points.time.monotonic", lambda: now[0])
    for shell in _load(folder):
        shell.run_cell("x = 1")
        shell.run_cell("x = 2")
        assert (folder / "ticks.txt").read_text() == "tick\n"
        now[0] += JOB_LOOP_SECONDS
        shell.run_cell("x = 3")
        assert (folder / "ticks.txt").read_text() == "tick\ntick\n"


# -- the stat check that spares %load_ext the folder's hierarchy when no folder serves an application point --

def test_load_ext_builds_no_hierarchy_when_no_folder_serves_an_application_point(folder: Path) -> None:
    _put(folder, "extensions/agent_init/_10_other.py", STARTED)  # another point's folder: not a reason
    for shell in _load(folder):
        shell.run_cell("x = 1")  # the first job_loop tick
        app = shell.magics_manager.registry["A0Magics"].app
        assert app._registry is None and not shell.display_pub.outputs
        assert not (folder / "started.txt").exists()


def test_an_extension_folder_added_mid_session_is_fired_at_the_next_tick(folder: Path) -> None:
    for shell in _load(folder):
        app = shell.magics_manager.registry["A0Magics"].app
        shell.run_cell("x = 1")
        assert app._registry is None
        _put(folder, "extensions/python/job_loop/_50_tick.py", TICK)  # Agent Zero's spelling
        app._last_tick = None  # (the next tick is due)
        shell.run_cell("x = 2")
        assert (folder / "ticks.txt").read_text() == "tick\n"


def test_banners_of_a_plugin_and_of_the_profile_folder_show_at_load_ext(folder: Path) -> None:
    _put(folder, "plugins/greeter/plugin.yaml", "name: greeter\n")
    _put(folder, "plugins/greeter/extensions/banners/_10_welcome.py", BANNER)
    _put(folder, "agents/default/extensions/_functions/__main__/init_a0/start/_10_started.py", STARTED)
    for shell in _load(folder):
        texts = [o["data"].get("text/plain", "") for o in shell.display_pub.outputs]
        assert texts[:2] == ["a0 info: Hello: first", "a0 warning: Low disk: Only 2 GB left on localhost"]
        assert (folder / "started.txt").read_text() == "init_a0 end\n"


def _pip_plugin(site: Path) -> None:
    """A pip-installed plugin: a package folder with plugin.yaml and a banners extension, and its dist-info."""
    _put(site, "greeter_pkg/__init__.py", "")
    _put(site, "greeter_pkg/plugin.yaml", "name: greeter_pkg\n")
    _put(site, "greeter_pkg/extensions/banners/_10_welcome.py", BANNER)
    _put(site, "greeter_pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: greeter-pkg\nVersion: 1.0\n")
    _put(site, "greeter_pkg-1.0.dist-info/entry_points.txt", "[a0nb.plugins]\ngreeter_pkg = greeter_pkg\n")


def test_a_pip_installed_plugin_still_shows_its_banners(folder: Path, tmp_path_factory: pytest.TempPathFactory,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    site = tmp_path_factory.mktemp("site")
    _pip_plugin(site)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    for shell in _load(folder):
        texts = [o["data"].get("text/plain", "") for o in shell.display_pub.outputs]
        assert texts[:2] == ["a0 info: Hello: first", "a0 warning: Low disk: Only 2 GB left on localhost"]


def test_the_pip_plugin_answer_is_read_again_once_a_sys_path_folder_changes(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import os
    from a0nb.notebook.app_roots import CACHE_NAME, pip_plugins
    from a0nb.resources import user_home
    site = tmp_path_factory.mktemp("site")
    (site / "other-2.0.dist-info").mkdir()
    (site / "other-2.0.dist-info" / "entry_points.txt").write_text("[console_scripts]\nx = y:z\n")
    os.utime(site, (1_000_000_000, 1_000_000_000))  # installed long ago: its answer is kept
    monkeypatch.syspath_prepend(str(site))
    assert pip_plugins() is False
    cached = json.loads((user_home() / "cache" / CACHE_NAME).read_text())
    assert cached[str(site)] == [site.stat().st_mtime_ns, False]
    _pip_plugin(site)  # pip installs a plugin: a new dist-info folder, so the folder's mtime moves
    assert pip_plugins() is True


def test_load_ext_in_a_folder_without_application_point_extensions_stays_light(folder: Path) -> None:
    """`%load_ext` imports neither the files layer (hierarchy, plugins, importlib.metadata) nor yaml or asyncio."""
    import subprocess
    import sys
    code = ("from IPython.core.interactiveshell import InteractiveShell; import sys\n"
            "InteractiveShell.instance().run_line_magic('load_ext', 'a0nb')\n"
            "heavy = ('a0nb.files.hierarchy', 'a0nb.files.extensions', 'importlib.metadata', 'yaml', 'asyncio')\n"
            "print([m for m in heavy if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=folder, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
