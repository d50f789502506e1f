"""The search hierarchy: order, labels, plugins, dedupe, change detection."""
from __future__ import annotations

import os
import time
from pathlib import Path

import a0nb
from a0nb.diagnostics import Diagnostics
from a0nb.files.hierarchy import Hierarchy
from a0nb.files.roots import search_roots


def test_root_order_and_labels(tmp_path: Path) -> None:
    nb, home, bundled = tmp_path / "nb", tmp_path / "home", tmp_path / "bundled"
    for p in (nb, home, bundled):
        p.mkdir()
    roots = search_roots(nb, "teacher", home=home, plugin_dirs=[("demo", tmp_path / "demo")], bundled=bundled)
    assert [r.label for r in roots] == [
        "project-profile", "project", "notebook-profile", "notebook", "user-profile", "user",
        "plugin demo (profile)", "plugin demo", "bundled-profile", "bundled"]
    assert roots[0].path == nb.resolve() / ".a0proj" / "agents" / "teacher"
    assert roots[3].path == nb.resolve()
    assert roots[-1].path == bundled


def test_public_paths_function(nb: Path) -> None:
    roots = a0nb.paths(nb, "default")
    assert roots[3].label == "notebook" and roots[3].path == nb.resolve()
    assert roots[-1].label == "bundled"
    assert (roots[-1].path / "prompts" / "agent.system.main.md").is_file()


def test_plugins_join_the_hierarchy_and_toggles(nb: Path, tmp_path: Path) -> None:
    plugin = nb / "plugins" / "demo"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: demo\ntitle: Demo\n")
    h = Hierarchy(nb, home=tmp_path / "home")
    assert "plugin demo" in [r.label for r in h.roots]
    (nb / ".a0proj" / "plugins" / "demo").mkdir(parents=True)
    (nb / ".a0proj" / "plugins" / "demo" / ".toggle-0").write_text("")
    h = Hierarchy(nb, home=tmp_path / "home")
    assert "plugin demo" not in [r.label for r in h.roots]


def test_a_toggle_or_config_written_into_an_existing_folder_applies_on_refresh(nb: Path, tmp_path: Path) -> None:
    plugin = nb / "plugins" / "demo"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: demo\n")
    scoped = nb / ".a0proj" / "plugins" / "demo"
    scoped.mkdir(parents=True)
    h = Hierarchy(nb, home=tmp_path / "home")
    assert "plugin demo" in [r.label for r in h.roots] and h.refresh() is False
    (scoped / ".toggle-0").write_text("")  # the folder exists already: only its mtime says so
    assert h.refresh() is True and "plugin demo" not in [r.label for r in h.roots]
    (scoped / ".toggle-0").unlink()
    assert h.refresh() is True and "plugin demo" in [r.label for r in h.roots]
    (scoped / "config.json").write_text('{"a": 1}')
    assert h.refresh() is True
    gen = h.generation
    (scoped / "config.json").write_text('{"a": 22}')  # edited in place: its own stat says so
    os.utime(scoped / "config.json", ns=(time.time_ns(), time.time_ns() + 10_000_000))
    assert h.refresh() is True and h.generation == gen + 1
    assert h.refresh() is False


def test_bad_plugin_yaml_is_a_diagnostic(nb: Path, tmp_path: Path) -> None:
    plugin = nb / "plugins" / "broken"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: [unclosed\n")
    d = Diagnostics()
    h = Hierarchy(nb, home=tmp_path / "home", diagnostics=d)
    assert "plugin broken" not in [r.label for r in h.roots]
    [diag] = d.of("plugin")
    assert diag.path and diag.path.endswith("plugin.yaml") and diag.line is not None


def test_refresh_sees_new_and_edited_files(nb: Path, tmp_path: Path) -> None:
    h = Hierarchy(nb, home=tmp_path / "home")
    assert h.refresh() is False
    assert h.files("tools", "mine.py") == []
    (nb / "tools").mkdir()
    (nb / "tools" / "mine.py").write_text("x = 1\n")
    assert h.refresh() is True
    assert [p for _, p in h.files("tools", "mine.py")] == [nb.resolve() / "tools" / "mine.py"]
    gen = h.generation
    time.sleep(0.01)
    (nb / "tools" / "mine.py").write_text("x = 22\n")
    os.utime(nb / "tools" / "mine.py", ns=(time.time_ns(), time.time_ns() + 10_000_000))
    assert h.refresh() is True and h.generation == gen + 1
    assert h.refresh() is False


def test_notebook_inside_bundled_root_counts_once() -> None:
    bundled = a0nb.paths(".")[-1].path
    roots = search_roots(bundled, "default", bundled=bundled)
    assert [r.path for r in roots].count(bundled) == 1
