"""`pytest --nbval` on this folder: nbval's kernels inherit this process's environment, so give them the
one the cassettes were recorded in (no a0nb settings from the shell, an empty $A0NB_HOME)."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from a0nb.notebook.demo import replay_env

_HOME_KEY = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    # a user's ~/.a0nb prompts or an A0NB_CTX_LENGTH in the shell would change the requests, and strict
    # replay would (rightly) refuse them; the tests under tests/ set their own per-test environment
    home = tempfile.mkdtemp(prefix="a0nb-nbval-home-")
    config.stash[_HOME_KEY] = home
    env = replay_env(Path(home))
    for name in [k for k in os.environ if k not in env]:
        del os.environ[name]
    os.environ.update(env)


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_HOME_KEY, None)
    if home:
        shutil.rmtree(home, ignore_errors=True)
