"""The background import gives way to agent turns: it pauses at import statements while a turn runs, goes on
when a call needs the module, when another thread waits for a module lock it holds, and after its limit."""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from a0nb.providers.foreground import FOREGROUND
from a0nb.providers.litellm_provider import _LazyImport

STEPS = 12


@pytest.fixture
def slow_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A package whose __init__ imports STEPS submodules, each taking ~20 ms: a small litellm."""
    name = f"slowpkg_{time.monotonic_ns()}"
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("".join(f"from . import part{i}\n" for i in range(STEPS)) + "DONE = True\n")
    for i in range(STEPS):
        (pkg / f"part{i}.py").write_text("import time\nend = time.perf_counter() + 0.02\nwhile time.perf_counter() < end:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]


def _parts_done(name: str) -> int:
    return sum(f"{name}.part{i}" in sys.modules for i in range(STEPS))


def _loader(name: str, give_way_for: float = 30.0) -> _LazyImport:
    loader = _LazyImport(name)
    loader.GIVE_WAY_FOR = give_way_for
    return loader


def test_without_a_turn_the_warm_up_just_imports(slow_package: str) -> None:
    loader = _loader(slow_package)
    loader.warm()
    assert loader.thread is not None
    loader.thread.join(10)
    assert loader.module is not None and loader.module.DONE and not loader.urgent


def test_it_waits_while_a_turn_runs_and_goes_on_after(slow_package: str) -> None:
    loader = _loader(slow_package)
    with FOREGROUND:
        loader.warm()
        time.sleep(0.5)  # the whole import takes ~0.25 s when it does not give way
        paused_at = _parts_done(slow_package)
        assert paused_at < STEPS and loader.module is None
    assert loader.thread is not None
    loader.thread.join(10)
    assert loader.module is not None and _parts_done(slow_package) == STEPS


def test_a_call_that_needs_the_module_ends_the_waiting(slow_package: str) -> None:
    loader = _loader(slow_package)
    with FOREGROUND:
        loader.warm()
        time.sleep(0.1)
        module = loader.get()  # from another thread than the warm-up: urgent
    assert module.DONE and loader.urgent


def test_a_thread_waiting_for_a_module_the_warm_up_holds_is_not_stuck(slow_package: str) -> None:
    loader = _loader(slow_package)
    got: list[Any] = []
    with FOREGROUND:
        loader.warm()
        while slow_package not in sys.modules:  # the warm-up is inside the package's __init__, holding its lock
            time.sleep(0.005)
        time.sleep(0.05)
        importer = threading.Thread(target=lambda: got.append(__import__(slow_package)))
        importer.start()
        importer.join(20)
    assert got and got[0].DONE
    assert not loader.urgent  # freed by seeing the waiting thread, not by the time limit


def test_it_gives_way_only_for_a_limited_time(slow_package: str) -> None:
    loader = _loader(slow_package, give_way_for=0.2)
    with FOREGROUND:
        loader.warm()
        assert loader.thread is not None
        loader.thread.join(10)
        assert loader.module is not None and loader.urgent  # finished inside the turn, after the limit


def test_the_import_hook_is_removed_afterwards(slow_package: str) -> None:
    import builtins
    before = builtins.__import__
    loader = _loader(slow_package)
    loader.warm()
    assert loader.thread is not None
    loader.thread.join(10)
    assert builtins.__import__ is before


def test_a_finished_gate_left_in_another_hook_chain_never_waits() -> None:
    import threading as th

    from a0nb.providers.litellm_provider import _GiveWay
    gate = _GiveWay(th.get_ident(), lambda ident: True, 0.001)  # would wait forever in this thread
    gate.ident = None  # what the warm-up does when it ends
    assert gate("json") is sys.modules["json"]
