"""An idle tool worker is woken on its waker's CPU (its affinity narrowed to that CPU just before the
wake-up) and widens it back before it runs the call: a tool, and the threads it starts, always run with
the mask the worker started with. A kernel that refuses a mask turns the hint off and the calls still run."""
from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.engine import wake_here
from a0nb.testing import answer, tool_reply

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs sched_setaffinity and at least two usable CPUs",
)


def _calls(fn, n: int) -> list[object]:  # type: ignore[no-untyped-def]
    from a0nb.engine.tool_thread import in_daemon_thread

    async def run() -> list[object]:
        return [await in_daemon_thread(fn, {}) for _ in range(n)]

    return asyncio.run(run())


def test_a_tool_and_its_threads_run_with_the_whole_mask(nb: Path) -> None:
    mask = os.sched_getaffinity(0)
    seen: list[tuple[set[int], set[int]]] = []

    def probe(i: int = 0) -> str:
        child: list[set[int]] = []
        t = threading.Thread(target=lambda: child.append(os.sched_getaffinity(0)))
        t.start()
        t.join()
        seen.append((os.sched_getaffinity(0), child[0]))
        return "ok"

    agent = Agent(nb, model=[tool_reply("probe", i=i) for i in range(5)] + [answer("done")])
    agent.register_tool(probe)
    assert agent.ask("go").text == "done"
    assert seen == [(mask, mask)] * 5  # the 2nd to 5th calls woke a narrowed worker: widened before the call


def test_the_waker_narrows_the_sleeping_worker_to_its_cpu(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    if wake_here._load_getcpu() is None:
        pytest.skip("no sched_getcpu here")
    real = os.sched_setaffinity
    log: list[tuple[int, str, tuple[int, ...]]] = []

    def record(pid: int, cpus) -> None:  # type: ignore[no-untyped-def]
        log.append((pid, threading.current_thread().name, tuple(sorted(cpus))))
        real(pid, cpus)

    _calls(lambda: "warm", 2)  # an idle worker with a home
    monkeypatch.setattr(os, "sched_setaffinity", record)
    tids: list[int] = []
    assert _calls(lambda: tids.append(threading.get_native_id()) or "ok", 3) == ["ok"] * 3
    narrowed = [entry for entry in log if entry[0] != 0]
    widened = [entry for entry in log if entry[0] == 0]
    assert len(narrowed) == 3 and {pid for pid, _, _ in narrowed} == set(tids)
    assert all(len(cpus) == 1 for _, _, cpus in narrowed)  # one CPU: the waker's
    assert not any(name.startswith("a0nb-tool") for _, name, _ in narrowed)  # done by the waker
    assert len(widened) == 3 and all(name.startswith("a0nb-tool") for _, name, _ in widened)  # by the worker
    assert {cpus for _, _, cpus in widened} == {tuple(sorted(os.sched_getaffinity(0)))}


def test_a_refused_mask_turns_steering_off_and_calls_still_run(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    if wake_here._load_getcpu() is None:
        pytest.skip("no sched_getcpu here")
    _calls(lambda: "warm", 2)

    def refuse(pid: int, cpus) -> None:  # type: ignore[no-untyped-def]
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr(os, "sched_setaffinity", refuse)
    monkeypatch.setattr(wake_here, "_enabled", True)  # (restored after the test)
    assert _calls(lambda: threading.current_thread().name, 3) == ["a0nb-tool-<lambda>"] * 3
    assert not wake_here.steering()
