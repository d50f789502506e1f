"""Shared fixtures: every test gets an isolated $A0NB_HOME and refuses the network except loopback."""
from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
# what runs at import and collection time (module-level loads) must not write into the real ~/.a0nb either
os.environ["A0NB_HOME"] = tempfile.mkdtemp(prefix="a0nb-test-home-")
os.environ["A0NB_TRUST"] = "*"  # the suite's own folders (and the kernels it starts) are trusted


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("a0home")
    monkeypatch.setenv("A0NB_HOME", str(home))
    for var in list(os.environ):
        if var.startswith("A0NB_") and var not in ("A0NB_HOME", "A0NB_REGEN_GOLDEN", "A0NB_SOAK_COUNT"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("A0NB_FROZEN_TIME", "2026-01-31T09:30:00")
    # the suite's folders are its own: trusted (tests/security unsets this to test folder trust itself)
    monkeypatch.setenv("A0NB_TRUST", "*")
    # the suite's scripted models run their code without asking (the Python API's default is `ask`;
    # tests/security and the magic's front-end default unset this)
    monkeypatch.setenv("A0NB_APPROVAL", "auto")
    return home


_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: object) -> object:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and self.family in (socket.AF_INET, socket.AF_INET6):
        if not (host.startswith("127.") or host in ("localhost", "::1")):
            raise RuntimeError(f"tests must not touch the network (tried {address!r})")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)


def _installation_folders() -> list[str]:
    from a0nb.folder_trust import BUNDLED_PARTS
    from a0nb.resources import bundled_root
    out = []
    for part in BUNDLED_PARTS:
        for folder, subs, _files in os.walk(bundled_root() / part):
            subs[:] = [d for d in subs if d != "__pycache__"]
            out.append(folder)
    return out


_INSTALLATION: list[str] = []


def _stats(folders: list[str]) -> list[object]:
    out: list[object] = []
    for folder in folders:
        try:
            out.append(os.stat(folder).st_mtime_ns)
        except OSError:
            out.append(None)
    return out


@pytest.fixture(autouse=True)
def _installation_untouched() -> Iterator[None]:
    """No test writes into the installation's folders (a0nb's own prompts, extensions, tools, ...): the agents
    of later tests watch them, and a changed folder reads as an edit (a young folder is not cached for a while),
    so one test's write made another fail depending on the order. A bytecode cache counts: write none there."""
    if not _INSTALLATION:
        _INSTALLATION[:] = _installation_folders()
    before = _stats(_INSTALLATION)
    yield
    changed = [f for f, a, b in zip(_INSTALLATION, before, _stats(_INSTALLATION)) if a != b]
    assert not changed, f"this test wrote into the installation's folders: {changed}"


@pytest.fixture
def nb(tmp_path: Path) -> Path:
    """An empty notebook folder."""
    folder = tmp_path / "nb"
    folder.mkdir()
    return folder


@pytest.fixture(params=["events", "stats"])
def file_events_on(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Both ways a step checks files: with file events (Linux inotify), and by stats alone (as where there are
    none: another system, A0NB_FILE_EVENTS=0). True with events."""
    from a0nb.files import file_events
    if request.param == "stats" or file_events.shared() is None:
        monkeypatch.setattr(file_events._SHARED, "feed", None)
        monkeypatch.setattr(file_events._SHARED, "opened", True)
        return False
    monkeypatch.setattr(file_events, "MAX_AGE", 60.0)  # (a slow machine must not let a Quiet lapse mid-test)
    return True
