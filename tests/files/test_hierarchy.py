"""The hierarchy's change check: a step costs a stat per watched path that exists, missing paths under an
old watched folder are left to that folder's mtime, and every addition is still seen at the next refresh."""
from __future__ import annotations

import os
import time
from pathlib import Path
from unittest import mock

import pytest

from a0nb.files.hierarchy import Hierarchy


def _age(*paths: Path, seconds: float = 60) -> None:
    old = time.time() - seconds
    for p in paths:
        os.utime(p, (old, old))


@pytest.fixture
def nb(tmp_path: Path) -> Path:
    folder = tmp_path / "nb"
    folder.mkdir()
    return folder


def _stats(h: Hierarchy) -> int:
    real = os.stat
    with mock.patch("os.stat", side_effect=real) as counted:
        assert h.refresh() is False
    return counted.call_count


def test_missing_paths_under_an_old_folder_are_not_stated_every_step(nb: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _age(nb, home)
    h = Hierarchy(nb, home=home, entry_points=False)
    watched = len(h._watch or [])
    assert _stats(h) < watched // 2 and watched > 20
    (tmp_path / "young").mkdir()
    _just_changed(tmp_path / "young")
    young = Hierarchy(tmp_path / "young", home=home, entry_points=False)  # just made: its children are stat'ed
    assert _stats(young) > _stats(h)


def _just_changed(folder: Path, ns: int | None = None) -> int:
    """Give `folder` an mtime within the clock's reach however long the test takes (a little in the future)."""
    ns = time.time_ns() + 5 * 10**9 + 123_457 if ns is None else ns
    os.utime(folder, ns=(ns, ns))
    return ns


@pytest.mark.parametrize("fine", [True, False])
def test_how_long_a_folder_stays_young_follows_its_file_system_s_clock(nb: Path, tmp_path: Path, fine: bool) -> None:
    """A second-old folder: past a clock tick where times have sub-millisecond digits, still young where the
    file system keeps whole seconds (its next change may get the same mtime): its missing children are stat'ed."""
    home = tmp_path / "home"
    home.mkdir()
    _age(home)
    second_ago = (time.time_ns() - 10**9) // 10**9 * 10**9
    _just_changed(nb, second_ago + (123_457 if fine else 0))
    h = Hierarchy(nb, home=home, entry_points=False)
    assert (_stats(h) <= 3) is fine
    (nb / "tools").mkdir()  # a real change: a new mtime either way
    assert h.refresh() is True


@pytest.mark.parametrize("sub", ["tools", "extensions/system_prompt", "prompts", "plugins", ".a0proj"])
def test_a_folder_added_under_an_old_folder_is_seen_at_the_next_refresh(nb: Path, tmp_path: Path, sub: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _age(nb, home)
    h = Hierarchy(nb, home=home, entry_points=False)
    h.refresh()
    h.refresh()
    generation = h.generation
    (nb / sub).mkdir(parents=True)
    assert h.refresh() is True and h.generation == generation + 1
    (nb / sub / "inner").mkdir()
    assert h.refresh() is True  # the new folder itself is young: watched by its own stat, not trusted yet


def test_a_folder_added_under_a_young_folder_is_seen(nb: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for fine in (True, False):
        young = nb / f"young-{fine}"
        young.mkdir()
        mtime = _just_changed(young, None if fine else (time.time_ns() // 10**9 + 5) * 10**9)
        h = Hierarchy(young, home=home, entry_points=False)  # just made: its mtime is not trusted
        h.refresh()
        (young / "tools").mkdir()
        os.utime(young, ns=(mtime, mtime))  # as if within the same clock tick
        assert h.refresh() is True


def test_a_plugin_switched_off_in_a_scope_that_does_not_exist_yet_is_seen(nb: Path, tmp_path: Path) -> None:
    # the scoped switch folders (nb/.a0proj/plugins/demo, ...) are below missing watched folders: not stat'ed
    # on each step, yet their appearance is seen through the folders above them
    home = tmp_path / "home"
    home.mkdir()
    plugin = nb / "plugins" / "demo"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: demo\n")
    _age(nb, nb / "plugins", plugin, home)
    h = Hierarchy(nb, home=home, entry_points=False)
    assert any(r.plugin == "demo" for r in h.roots)
    h.refresh()
    assert _stats(h) <= 8 and len(h._watch or []) > 30
    switch = nb / ".a0proj" / "plugins" / "demo"
    switch.mkdir(parents=True)
    (switch / ".toggle-0").write_text("")
    assert h.refresh() is True
    assert not any(r.plugin == "demo" for r in h.roots)
    (switch / ".toggle-0").unlink()
    assert h.refresh() is True
    assert any(r.plugin == "demo" for r in h.roots)


def test_bundled_plugins_are_part_of_the_installation_and_not_watched(nb: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    h = Hierarchy(nb, home=home, entry_points=False)
    shipped = [p.path for p in h.plugins if p.source == "bundled"]
    assert shipped
    assert not [w for w in h._watch or [] if any(w.startswith(str(p)) for p in shipped)]


def test_a0nb_trust_changed_in_the_environment_is_seen_at_the_next_refresh(nb: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment is compared once a refresh (its generation); A0NB_TRUST is read again when it changed."""
    home = tmp_path / "home"
    home.mkdir()
    _age(nb, home)
    monkeypatch.delenv("A0NB_TRUST", raising=False)
    h = Hierarchy(nb, home=home, entry_points=False)
    assert h.refresh() is False and h.refresh() is False
    monkeypatch.setenv("UNRELATED_VARIABLE", "1")  # another variable: the check reads A0NB_TRUST, still equal
    assert h.refresh() is False
    generation = h.generation
    monkeypatch.setenv("A0NB_TRUST", str(nb))
    assert h.refresh() is True and h.generation == generation + 1
    assert h.refresh() is False
    monkeypatch.delenv("A0NB_TRUST")
    assert h.refresh() is True
