"""a0nb/resources.py: where installed distributions can be found."""
from __future__ import annotations

import importlib.abc
import sys
from pathlib import Path
from typing import Any

import pytest

from a0nb.resources import distributions_only_on_sys_path


class _Elsewhere(importlib.abc.MetaPathFinder):
    """A finder of distributions that may look anywhere (a zipapp's, a bundler's)."""

    def find_spec(self, *args: Any, **kwargs: Any) -> None:
        return None

    def find_distributions(self, *args: Any, **kwargs: Any) -> list[Any]:
        return []


def test_the_importlib_metadata_backport_reads_sys_path_like_the_standard_finder(monkeypatch: pytest.MonkeyPatch) -> None:
    backport = pytest.importorskip("importlib_metadata")  # importing it puts its MetadataPathFinder on sys.meta_path
    assert any(type(f) is backport.MetadataPathFinder for f in sys.meta_path)
    assert distributions_only_on_sys_path()
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, _Elsewhere()])
    assert not distributions_only_on_sys_path()


def test_pip_plugin_caches_hold_with_the_backport_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # files/plugins.ENTRY_POINTS and notebook/app_roots.pip_plugins keep their answer while nothing changed
    import os

    pytest.importorskip("importlib_metadata")
    from a0nb.files.plugins import ENTRY_POINTS
    from a0nb.notebook.app_roots import pip_plugins
    monkeypatch.setenv("A0NB_HOME", str(tmp_path / "home"))
    site = tmp_path / "site"
    site.mkdir()
    os.utime(site, (1_000_000_000, 1_000_000_000))
    monkeypatch.syspath_prepend(str(site))
    assert ENTRY_POINTS.get() is ENTRY_POINTS.get()
    assert pip_plugins() is False
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, _Elsewhere()])
    assert ENTRY_POINTS.get() is not ENTRY_POINTS.get()  # a custom finder: read every time
    assert pip_plugins() is True  # and what it may find is not known: every point is kept
