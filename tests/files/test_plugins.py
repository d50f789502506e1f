"""Plugin configuration as Agent Zero resolves it (issue 17, item 6): the highest-priority scoped
`config.json` replaces `default_config.yaml` (no merge); `per_project_config` / `per_agent_config` decide
which scoped folders count."""
from __future__ import annotations

import json
from pathlib import Path

from a0nb.diagnostics import Diagnostics
from a0nb.files.plugins import plugin_config, read_manifest, toggle_dirs


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
