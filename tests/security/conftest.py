"""A real IPython shell whose display publisher keeps what the notebook would save."""
from __future__ import annotations

import atexit
from pathlib import Path
from typing import Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config


def _dispose() -> None:
    if InteractiveShell.initialized():
        atexit.unregister(InteractiveShell.instance().atexit_operations)
    InteractiveShell.clear_instance()


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    from IPython.core.displaypub import CapturingDisplayPublisher
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / ".ipython"))
    _dispose()
    cfg = Config()
    cfg.HistoryManager.hist_file = ":memory:"
    sh = InteractiveShell.instance(config=cfg)
    sh.display_pub = CapturingDisplayPublisher()
    sh.run_line_magic("load_ext", "a0nb")
    yield sh
    sh.run_line_magic("unload_ext", "a0nb")
    _dispose()
