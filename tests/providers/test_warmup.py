"""The background import of litellm (`_LazyImport`): it completes on its own; it starts only once no turn
has run for a quiet moment, so a turn that does not need the module never runs beside the import; a call
that needs the module gets it at once, or waits for the import under way; nothing in `builtins` is patched."""
from __future__ import annotations

import builtins
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any, Iterator

import pytest

from a0nb.providers.foreground import Foreground
from a0nb.providers.litellm_provider import _LazyImport

STEPS = 6


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, types.SimpleNamespace]]:
    """A package importing STEPS submodules (a small litellm). Its __init__ reports to `probe`: that it
    started, which thread imports it, whether `builtins.__import__` was the original and whether a turn was
    running in `probe.foreground`; it holds still while `probe.hold` is set, until `probe.release` is."""
    name = f"warmpkg_{time.monotonic_ns()}"
    probe = types.SimpleNamespace(started=threading.Event(), hold=False, release=threading.Event(),
                                  threads=[], original_import=builtins.__import__, import_was_original=[],
                                  foreground=Foreground(), busy=[])
    monkeypatch.setitem(sys.modules, f"{name}_probe", probe)
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import builtins, sys, threading\n"
        f"probe = sys.modules['{name}_probe']\n"
        "probe.threads.append(threading.current_thread().name)\n"
        "probe.import_was_original.append(builtins.__import__ is probe.original_import)\n"
        "probe.busy.append(probe.foreground.busy)\n"
        "probe.started.set()\n"
        "if probe.hold:\n    probe.release.wait(30)\n"
        + "".join(f"from . import part{i}\n" for i in range(STEPS)) + "DONE = True\n")
    for i in range(STEPS):
        (pkg / f"part{i}.py").write_text(f"VALUE = {i}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, probe
    # (a copy taken in one C call: a warm-up thread of this or an earlier test may be importing meanwhile)
    for key in [k for k in list(sys.modules) if k == name or k.startswith(name + ".")]:
        sys.modules.pop(key, None)


def _loader(name: str, foreground: Foreground, quiet: float = 0.0) -> tuple[_LazyImport, list[Any]]:
    configured: list[Any] = []
    loader = _LazyImport(name, configured.append, foreground)
    loader.QUIET = quiet
    return loader, configured


def _join(loader: _LazyImport) -> None:
    assert loader.thread is not None
    loader.thread.join(30)
    assert not loader.thread.is_alive()


def test_the_background_import_completes_and_runs_first_and_then(package: tuple[str, Any]) -> None:
    name, probe = package
    loader, configured = _loader(name, Foreground())
    order: list[str] = []
    assert loader.warm(first=lambda: order.append("first"), then=lambda m: order.append(f"then {m.DONE}"))
    _join(loader)
    assert loader.module is sys.modules[name] and loader.module.DONE and loader.warmed
    assert configured == [loader.module]
    assert order == ["first", "then True"]
    assert probe.threads == [f"a0nb-{name}-import"]


def test_the_import_patches_nothing_in_builtins(package: tuple[str, Any]) -> None:
    name, probe = package
    loader, _ = _loader(name, Foreground())
    loader.warm()
    _join(loader)
    assert probe.import_was_original == [True]
    assert builtins.__import__ is probe.original_import


def test_a_second_warm_up_starts_nothing(package: tuple[str, Any]) -> None:
    name, _probe = package
    loader, configured = _loader(name, Foreground())
    assert loader.warm()
    assert not loader.warm()
    _join(loader)
    assert not loader.warm()  # imported: nothing left to warm
    assert len(configured) == 1


def test_a_running_turn_keeps_the_import_from_starting(package: tuple[str, Any]) -> None:
    name, probe = package
    loader, _ = _loader(name, probe.foreground)
    with probe.foreground:  # a turn that does not need the module
        loader.warm(first=lambda: None)
        assert loader.waiting.wait(10)  # the warm-up is past `first` and ready to import
        assert not probe.started.wait(0.5)  # ...but does not while the turn runs
        assert name not in sys.modules
    _join(loader)
    assert loader.module.DONE and loader.warmed
    assert probe.busy == [False]  # it began after the turn ended


def test_the_quiet_wait_lasts_while_a_turn_runs_and_ends_after_it() -> None:
    foreground = Foreground()
    done = threading.Event()
    waiter = threading.Thread(target=lambda: (foreground.wait_quiet(0.0), done.set()), daemon=True)
    with foreground:
        waiter.start()
        assert not done.wait(0.5)
    assert done.wait(10)


def test_an_idle_foreground_is_quiet_at_once() -> None:
    foreground = Foreground()
    with foreground:
        pass
    done = threading.Event()
    waiter = threading.Thread(target=lambda: (foreground.wait_quiet(0.0), done.set()), daemon=True)
    waiter.start()
    assert done.wait(10)


def test_a_call_that_needs_the_module_imports_it_at_once(package: tuple[str, Any]) -> None:
    name, probe = package
    loader, configured = _loader(name, probe.foreground)
    then: list[Any] = []
    with probe.foreground:  # a turn that needs it: it does not wait for the quiet moment
        loader.warm(then=then.append)
        assert loader.waiting.wait(10)
        module = loader.get()
        assert module.DONE and probe.threads == [threading.current_thread().name] and probe.busy == [True]
    _join(loader)  # the warm-up finds the module imported and leaves
    assert configured == [module] and not loader.warmed and then == []


def test_a_call_during_the_background_import_waits_for_it_and_gets_it(package: tuple[str, Any]) -> None:
    name, probe = package
    loader, configured = _loader(name, Foreground())
    probe.hold = True
    loader.warm()
    assert probe.started.wait(10)  # the warm-up is inside the package's __init__
    got: list[Any] = []
    caller = threading.Thread(target=lambda: got.append(loader.get()))
    caller.start()
    probe.release.set()
    caller.join(30)
    _join(loader)
    assert got == [sys.modules[name]] and configured == got and loader.warmed
    assert probe.threads == [f"a0nb-{name}-import"]  # imported once, by the warm-up


def test_a_broken_install_surfaces_on_the_first_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"brokenpkg_{time.monotonic_ns()}"
    (tmp_path / f"{name}.py").write_text("raise RuntimeError('half-installed')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    loader, configured = _loader(name, Foreground())
    loader.warm()
    _join(loader)  # the warm-up swallowed it: nothing printed into a cell
    assert loader.module is None
    with pytest.raises(RuntimeError, match="half-installed"):
        loader.get()
    assert configured == []
