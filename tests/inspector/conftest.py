"""Fixtures for the inspector tests: frozen time and the scripted turn of `inspector_nb`, run in temp folders."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from inspector_nb import run_turn

from a0nb import Agent


@pytest.fixture(autouse=True)
def _frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A0NB_FROZEN_TIME", "2026-01-01T00:00:00")


@pytest.fixture
def turn_factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], tuple[Agent, Any]]:
    """Runs the scripted turn in `tmp_path/<name>` with the working directory set to that folder."""
    def make(name: str = "nb", **kwargs: Any) -> tuple[Agent, Any]:
        folder = tmp_path / name
        folder.mkdir()
        monkeypatch.chdir(folder)
        return run_turn(folder, **kwargs)
    return make


@pytest.fixture
def scripted(turn_factory: Callable[..., tuple[Agent, Any]]) -> tuple[Agent, Any]:
    return turn_factory()
