"""Plugin configuration as Agent Zero resolves it (issue 17, item 6): the highest-priority scoped
`config.json` replaces `default_config.yaml` (no merge); `per_project_config` / `per_agent_config` decide
which scoped folders count."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from a0nb.diagnostics import Diagnostics
from a0nb.files.plugins import discover_plugins, plugin_config, read_manifest, toggle_dirs


def _plugin(tmp_path: Path, manifest: str = "name: budget\n") -> Path:
    folder = tmp_path / "nb" / "plugins" / "budget"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(manifest, encoding="utf-8")
    (folder / "default_config.yaml").write_text("limit: 1.5\ncurrency: EUR\n", encoding="utf-8")
    return folder


def _write(path: Path, values: dict) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(values), encoding="utf-8")


def test_a_config_json_replaces_the_defaults_and_the_highest_scope_wins(tmp_path: Path) -> None:
    folder, nb, home, d = _plugin(tmp_path), tmp_path / "nb", tmp_path / "home", Diagnostics()
    plugin = read_manifest(folder, "notebook", d)
    assert plugin is not None
    assert plugin_config(plugin, nb, home, "default", d) == {"limit": 1.5, "currency": "EUR"}
    _write(home / "plugins" / "budget", {"limit": 3})
    assert plugin_config(plugin, nb, home, "default", d) == {"limit": 3}  # no currency: replaced, not merged
    _write(nb / ".a0proj" / "plugins" / "budget", {"limit": 4})
    assert plugin_config(plugin, nb, home, "default", d) == {"limit": 4}
    _write(nb / ".a0proj" / "agents" / "coder" / "plugins" / "budget", {"limit": 5})
    assert plugin_config(plugin, nb, home, "coder", d) == {"limit": 5}
    assert plugin_config(plugin, nb, home, "default", d) == {"limit": 4}


def test_a_broken_config_json_is_a_diagnostic_and_the_defaults_apply(tmp_path: Path) -> None:
    folder, nb, home, d = _plugin(tmp_path), tmp_path / "nb", tmp_path / "home", Diagnostics()
    plugin = read_manifest(folder, "notebook", d)
    assert plugin is not None
    (nb / ".a0proj" / "plugins" / "budget").mkdir(parents=True)
    (nb / ".a0proj" / "plugins" / "budget" / "config.json").write_text("{nope", encoding="utf-8")
    assert plugin_config(plugin, nb, home, "default", d) == {"limit": 1.5, "currency": "EUR"}
    assert any("config.json unreadable" in x.message for x in d)


def test_per_project_and_per_agent_flags_choose_the_scoped_folders(tmp_path: Path) -> None:
    folder, nb, home, d = _plugin(tmp_path, "name: budget\nper_project_config: false\n"), tmp_path / "nb", \
        tmp_path / "home", Diagnostics()
    plugin = read_manifest(folder, "notebook", d)
    assert plugin is not None
    dirs = toggle_dirs(plugin, nb, home, "coder")
    assert nb / ".a0proj" / "plugins" / "budget" not in dirs
    assert nb / "agents" / "coder" / "plugins" / "budget" in dirs
    _write(nb / ".a0proj" / "plugins" / "budget", {"limit": 9})  # ignored: the plugin is not per project
    assert plugin_config(plugin, nb, home, "coder", d) == {"limit": 1.5, "currency": "EUR"}


def test_pip_plugins_are_read_again_once_a_sys_path_folder_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # files/plugins.ENTRY_POINTS keeps the scan of every distribution's metadata while no sys.path folder changed
    import os

    from a0nb.files.plugins import ENTRY_POINTS
    site = tmp_path / "site"
    site.mkdir()
    os.utime(site, (1_000_000_000, 1_000_000_000))  # installed long ago
    monkeypatch.syspath_prepend(str(site))
    first = ENTRY_POINTS.get()
    assert ENTRY_POINTS.get() is first and "greeter_pkg" not in [ep.name for ep in first]
    for rel, text in {"greeter_pkg/__init__.py": "", "greeter_pkg/plugin.yaml": "name: greeter_pkg\n",
                      "greeter_pkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: greeter-pkg\nVersion: 1.0\n",
                      "greeter_pkg-1.0.dist-info/entry_points.txt": "[a0nb.plugins]\ngreeter_pkg = greeter_pkg\n"}.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    os.utime(site, (1_000_000_100, 1_000_000_100))  # pip added folders: the folder's mtime moved
    assert "greeter_pkg" in [ep.name for ep in ENTRY_POINTS.get()]
    found = discover_plugins(tmp_path / "nb", tmp_path / "home", tmp_path / "bundled", Diagnostics())
    assert ("greeter_pkg", "entry point greeter-pkg") in [(p.name, p.source) for p in found]
    # a folder changed within its mtime's resolution is read every time
    os.utime(site)
    again = ENTRY_POINTS.get()
    assert ENTRY_POINTS.get() is not again


def test_a_new_agent_reads_no_distribution_metadata_unless_one_declares_the_group(tmp_path: Path) -> None:
    # files/pip_plugins answers from entry_points.txt files (and its cache on disk): importlib.metadata is
    # imported, and every distribution's metadata scanned, only when some distribution names a0nb.plugins
    import os
    import subprocess
    import sys

    code = ("import sys\nfrom a0nb import Agent\nfrom a0nb.testing import answer\n"
            "agent = Agent(sys.argv[1], model=[answer('hi')])\nassert agent.ask('go').text == 'hi'\n"
            "print('importlib.metadata' in sys.modules, 'greeter_pkg' in [p.name for p in agent.hierarchy.plugins])\n")
    nb, site = tmp_path / "nb", tmp_path / "site"
    nb.mkdir()
    site.mkdir()
    env = {**os.environ, "A0NB_HOME": str(tmp_path / "home"), "A0NB_TRUST": "*",
           "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", code, str(nb)], env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run() == "False False"
    assert run() == "False False"  # (the answer kept on disk)
    for rel, text in {"greeter_pkg/__init__.py": "", "greeter_pkg/plugin.yaml": "name: greeter_pkg\n",
                      "greeter_pkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: greeter-pkg\nVersion: 1.0\n",
                      "greeter_pkg-1.0.dist-info/entry_points.txt": "[a0nb.plugins]\ngreeter_pkg = greeter_pkg\n"}.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    assert run() == "True True"
