"""engine/bridge.py: the private event-loop thread an agent's turns run on ends with the last agent using it."""
from __future__ import annotations

import gc
import os
import threading
import time
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.engine.bridge import Bridge
from a0nb.testing import answer, tool_reply


def _open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def _settle(condition, seconds: float = 3.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return bool(condition())


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="counts open files through /proc")
def test_agents_that_are_gone_leave_no_loop_thread_nor_open_files(tmp_path: Path) -> None:
    def one(i: int) -> None:
        (tmp_path / f"nb{i}").mkdir()
        agent = Agent(tmp_path / f"nb{i}", model=[tool_reply("code_execution", runtime="python", code="print(1)"),
                                                  answer("ok")], settings={"approval": "auto"})
        assert agent.ask("go").text == "ok"

    one(0)  # (what a first agent imports and caches once per process is not a leak)
    gc.collect()
    files, threads = _open_files(), threading.active_count()
    for i in range(1, 6):
        one(i)
    gc.collect()
    assert _settle(lambda: threading.active_count() <= threads), [t.name for t in threading.enumerate()]
    assert _settle(lambda: _open_files() <= files)


def test_a_closed_bridge_starts_a_new_loop_when_used_again() -> None:
    bridge = Bridge()

    async def where() -> int:
        return threading.get_ident()

    bridge.run(where)
    old = bridge.loop
    bridge.close()
    assert old.is_closed()
    second = bridge.run(where)
    assert bridge.loop is not old and bridge.run(where) == second
    bridge.close()
