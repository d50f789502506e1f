"""Blocking function tools run in reusable daemon threads: one thread serves call after call, a call the
loop abandons (tool_timeout) has its thread stopped and retired, and the next call still runs, named and
in the caller's context; a function whose code is replaced is called with its new signature."""
from __future__ import annotations

import contextvars
import threading
import time
from pathlib import Path

from a0nb import Agent
from a0nb.testing import answer, tool_reply

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="unset")


def test_one_thread_serves_many_calls(nb: Path) -> None:
    seen: list[tuple[int, str, str]] = []

    def probe(i: int = 0) -> str:
        me = threading.current_thread()
        seen.append((me.ident or 0, me.name, WHO.get()))
        return "ok"

    WHO.set("caller")
    agent = Agent(nb, model=[tool_reply("probe", i=i) for i in range(6)] + [answer("done")])
    agent.register_tool(probe)
    before = threading.active_count()
    assert agent.ask("go").text == "done"
    assert len(seen) == 6
    assert len({ident for ident, _, _ in seen}) == 1  # the same worker, not a thread per call
    assert {name for _, name, _ in seen} == {"a0nb-tool-probe"}
    assert {who for _, _, who in seen} == {"caller"}  # the caller's context, as with a fresh thread
    assert threading.active_count() <= before + 1
    assert threading.get_ident() not in {ident for ident, _, _ in seen}


def test_abandoned_call_retires_its_thread_and_the_next_call_runs(nb: Path) -> None:
    spun: list[threading.Thread] = []
    after: list[threading.Thread] = []

    def spin() -> str:
        """Never returns on its own (CodeTimeout stops it)."""
        spun.append(threading.current_thread())
        while True:
            try:
                time.sleep(0.01)
            except Exception:
                pass

    def quick() -> str:
        after.append(threading.current_thread())
        return "quick done"

    agent = Agent(nb, model=[tool_reply("spin"), tool_reply("quick"), answer("done")],
                  settings={"tool_timeout": 0.3})
    agent.register_tool(spin)
    agent.register_tool(quick)
    result = agent.ask("go")
    assert result.text == "done"
    results = [r for r in agent.calls if r.tool_result]
    assert "did not finish within 0.3 s" in results[0].tool_result
    assert results[1].tool_result == "quick done"
    assert after and after[0] is not spun[0]  # the interrupted thread took no further call
    spun[0].join(5)
    assert not spun[0].is_alive()
    assert not [t for t in threading.enumerate() if t.name == "a0nb-tool-spin"]


def test_function_tool_signature_follows_replaced_code(nb: Path) -> None:
    def tool(a: int = 0) -> str:
        return f"a={a}"

    def replacement(a: int = 0, b: int = 0) -> str:
        return f"a={a} b={b}"

    agent = Agent(nb, model=[tool_reply("tool", a=1, b=2), tool_reply("tool", headline="again", a=1, b=2), answer("done")])
    agent.register_tool(tool)
    seen: list[str] = []

    def swap(response: object = None, **kwargs: object) -> None:
        seen.append(getattr(response, "message", ""))
        tool.__code__ = replacement.__code__

    agent.register_extension("tool_execute_after", swap, name="swap")
    agent.ask("go")
    assert seen[:2] == ["a=1", "a=1 b=2"]  # b was dropped for the old signature, passed for the new


def test_run_limited_times_out_and_lets_other_cancels_through() -> None:
    import asyncio

    import pytest

    from a0nb.engine.tool_thread import run_limited

    async def scenario() -> list[str]:
        out = []
        try:
            await run_limited(asyncio.sleep(5), 0.05)
        except asyncio.TimeoutError:
            out.append("timeout")
        out.append(str(await run_limited(asyncio.sleep(0, "fine"), 5)))  # the task is usable afterwards
        task = asyncio.current_task()
        assert task is not None
        if hasattr(task, "cancelling"):
            assert task.cancelling() == 0  # the timeout's own cancel was counted out
        inner = asyncio.ensure_future(run_limited(asyncio.sleep(5), 5))
        await asyncio.sleep(0.01)
        inner.cancel()  # an interrupt, not the time limit
        with pytest.raises(asyncio.CancelledError):
            await inner
        out.append("cancelled")
        return out

    assert asyncio.run(scenario()) == ["timeout", "fine", "cancelled"]


def test_interrupt_stops_a_blocking_function_tool(nb: Path) -> None:
    started = threading.Event()

    def block() -> str:
        """Sleeps until stopped."""
        started.set()
        while True:
            time.sleep(0.01)

    agent = Agent(nb, model=[tool_reply("block"), answer("never")])
    agent.register_tool(block)
    threading.Thread(target=lambda: (started.wait(5), agent.interrupt()), daemon=True).start()
    from a0nb.errors import TurnInterrupted
    try:
        agent.ask("go")
    except TurnInterrupted:
        pass
    else:
        raise AssertionError("the turn was not interrupted")
    deadline = time.monotonic() + 5
    while [t for t in threading.enumerate() if t.name == "a0nb-tool-block"] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [t for t in threading.enumerate() if t.name == "a0nb-tool-block"]  # its thread was stopped too


def test_quick_and_slow_calls_both_hand_back_results_and_errors(nb: Path) -> None:
    """A call that finishes at once is taken back by the waiting loop thread; one that outlasts the wait is
    awaited; either way its result, or its exception as the tool's error text, reaches the model."""
    def quick(i: int = 0) -> str:
        return f"quick {i}"

    def slow(i: int = 0) -> str:
        time.sleep(0.05)
        return f"slow {i}"

    def broken() -> str:
        raise ValueError("bad input")

    def broken_late() -> str:
        time.sleep(0.05)
        raise ValueError("bad later")

    agent = Agent(nb, model=[tool_reply("quick", i=1), tool_reply("slow", i=2), tool_reply("broken"),
                             tool_reply("broken_late"), answer("done")], settings={"tool_timeout": 5})
    for fn in (quick, slow, broken, broken_late):
        agent.register_tool(fn)
    assert agent.ask("go").text == "done"
    results = [r.tool_result for r in agent.calls if r.tool_result]
    assert results[:2] == ["quick 1", "slow 2"]
    assert "ValueError: bad input" in results[2] and "ValueError: bad later" in results[3]


def test_run_limited_counts_the_first_step_and_needs_no_timer_for_a_finished_one() -> None:
    import asyncio

    import pytest

    from a0nb.engine.tool_thread import run_limited

    async def blocks_then_waits() -> str:
        time.sleep(0.1)  # longer than the limit, before the first suspension
        await asyncio.sleep(5)
        return "never"

    async def at_once() -> str:
        return "done"

    async def echo() -> list[object]:
        got = []
        for value in ("a", "b"):
            got.append(await asyncio.sleep(0, value))
        return got

    async def scenario() -> list[object]:
        loop = asyncio.get_running_loop()
        out: list[object] = [await run_limited(at_once(), 0.01), await run_limited(echo(), 5)]
        started = loop.time()
        with pytest.raises(asyncio.TimeoutError):
            await run_limited(blocks_then_waits(), 0.05)
        out.append(loop.time() - started < 1)
        return out

    assert asyncio.run(scenario()) == ["done", ["a", "b"], True]


def test_a_call_that_needs_the_event_loop_is_not_held_up(nb: Path) -> None:
    """The loop thread's short wait for a result must not deadlock a function that waits on the loop."""
    import asyncio

    def uses_loop(agent: object = None) -> str:
        loop = agent.shared.bridge.loop  # type: ignore[attr-defined]
        return str(asyncio.run_coroutine_threadsafe(asyncio.sleep(0, "from the loop"), loop).result(5))

    agent = Agent(nb, model=[tool_reply("uses_loop"), answer("done")], settings={"tool_timeout": 10})
    agent.register_tool(uses_loop)
    started = time.monotonic()
    assert agent.ask("go").text == "done"
    assert [r.tool_result for r in agent.calls if r.tool_result][0] == "from the loop"
    assert time.monotonic() - started < 5


def test_async_tool_runs_in_a_copy_of_the_context_without_a_task_of_its_own(nb: Path) -> None:
    """An async tool is awaited in the loop's task under the time limit (no task per call), each of its
    steps in one copy of the caller's context: it sees the caller's values, its own survive its awaits,
    and the caller never sees them."""
    import asyncio

    seen: list[str] = []

    async def setter(value: str = "") -> str:
        seen.append(WHO.get())
        WHO.set(value)
        await asyncio.sleep(0.01)  # a real suspension: the timer path
        seen.append(WHO.get())
        return "set"

    after: list[str] = []

    def look(**kwargs: object) -> None:
        after.append(WHO.get())

    WHO.set("caller")
    agent = Agent(nb, model=[tool_reply("setter", value="tool"), tool_reply("setter", value="again"), answer("done")],
                  settings={"tool_timeout": 5})
    agent.register_tool(setter)
    agent.register_extension("tool_execute_after", look, name="look")
    assert agent.ask("go").text == "done"
    assert seen == ["caller", "tool", "caller", "again"]  # a fresh copy per call
    assert after and set(after) == {"caller"}


def test_async_tool_over_the_limit_is_stopped_and_the_turn_goes_on(nb: Path) -> None:
    import asyncio

    async def hang() -> str:
        await asyncio.sleep(30)
        return "never"

    async def quick_async() -> str:
        task = asyncio.current_task()
        cancelling = task.cancelling() if task is not None and hasattr(task, "cancelling") else 0
        return f"quick, cancelling={cancelling}"

    agent = Agent(nb, model=[tool_reply("hang"), tool_reply("quick_async"), answer("done")],
                  settings={"tool_timeout": 0.2})
    agent.register_tool(hang)
    agent.register_tool(quick_async)
    started = time.monotonic()
    assert agent.ask("go").text == "done"
    assert time.monotonic() - started < 5
    results = [r.tool_result for r in agent.calls if r.tool_result]
    assert "did not finish within 0.2 s" in results[0]
    assert results[1] == "quick, cancelling=0"  # the time limit's own cancel was counted out


def test_interrupt_stops_an_async_tool(nb: Path) -> None:
    import asyncio

    from a0nb.errors import TurnInterrupted

    started = threading.Event()
    stopped: list[str] = []

    async def wait_long() -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped.append("cancelled")
            raise
        return "never"

    agent = Agent(nb, model=[tool_reply("wait_long"), answer("never")], settings={"tool_timeout": 60})
    agent.register_tool(wait_long)
    threading.Thread(target=lambda: (started.wait(5), agent.interrupt()), daemon=True).start()
    began = time.monotonic()
    try:
        agent.ask("go")
    except TurnInterrupted:
        pass
    else:
        raise AssertionError("the turn was not interrupted")
    assert time.monotonic() - began < 5
    assert stopped == ["cancelled"]


def test_run_limited_runs_every_step_in_the_given_context() -> None:
    import asyncio

    import pytest

    from a0nb.engine.tool_thread import run_limited

    async def steps() -> list[str]:
        got = [WHO.get()]
        WHO.set("inside")
        await asyncio.sleep(0)
        got.append(WHO.get())
        try:
            await asyncio.sleep(5)
        finally:
            got.append(WHO.get())  # the time limit's CancelledError is thrown in there too
            out.append(got)
        return got

    out: list[list[str]] = []

    async def scenario() -> str:
        WHO.set("outer")
        import contextvars
        with pytest.raises(asyncio.TimeoutError):
            await run_limited(steps(), 0.05, contextvars.copy_context())
        return WHO.get()

    assert asyncio.run(scenario()) == "outer"
    assert out == [["outer", "inside", "inside"]]


def _burst(calls: int) -> list[str]:
    """`calls` blocking calls at once (each waits for all the others): more than MAX_IDLE workers at a time."""
    import asyncio

    from a0nb.engine.tool_thread import in_daemon_thread

    barrier = threading.Barrier(calls, timeout=10)

    def meet(i: int) -> str:
        barrier.wait()
        return f"{i} {threading.current_thread().name}"

    async def run() -> list[str]:
        return list(await asyncio.gather(*(in_daemon_thread(meet, {"i": i}) for i in range(calls))))

    return asyncio.run(run())


def test_workers_beyond_the_idle_ones_end_and_close_their_pipes() -> None:
    import os

    import pytest

    from a0nb.engine.tool_thread import MAX_IDLE

    if not Path("/proc/self/fd").exists():
        pytest.skip("counts open files through /proc")

    def settled(count: int) -> bool:
        deadline = time.monotonic() + 5
        while len(os.listdir("/proc/self/fd")) > count and time.monotonic() < deadline:
            time.sleep(0.02)
        return len(os.listdir("/proc/self/fd")) <= count

    assert _burst(MAX_IDLE + 3) == [f"{i} a0nb-tool-meet" for i in range(MAX_IDLE + 3)]
    time.sleep(0.1)
    files = len(os.listdir("/proc/self/fd"))
    for _ in range(3):  # the extra workers' pipes are closed when they end: no file left per burst
        _burst(MAX_IDLE + 3)
        assert settled(files)


def test_a_worker_without_a_free_file_descriptor_is_woken_by_a_lock(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from a0nb.engine import tool_thread
    from a0nb.engine.tool_thread import MAX_IDLE

    def no_pipe() -> tuple[int, int]:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(tool_thread.os, "pipe", no_pipe)
    assert _burst(MAX_IDLE + 2) == [f"{i} a0nb-tool-meet" for i in range(MAX_IDLE + 2)]  # new workers, no pipe
    monkeypatch.undo()
    assert _burst(MAX_IDLE + 2) == [f"{i} a0nb-tool-meet" for i in range(MAX_IDLE + 2)]  # idle ones serve again
    with tool_thread._LOCK:  # (the lock-woken workers still idle are retired: later tests find pipes)
        kept = [w for w in tool_thread._IDLE if w.go is not None]
        for w in kept:
            tool_thread._IDLE.remove(w)
            w.retired = True
    for w in kept:
        w.go.release()  # woken without a call, retired: it ends
        w.thread.join(5)
        assert not w.thread.is_alive()


def test_callable_object_tool_signature_is_read_at_each_call(nb: Path) -> None:
    class Tool:
        def __call__(self, a: int = 0) -> str:
            return f"a={a}"

    def wider(self: object, a: int = 0, b: int = 0) -> str:
        return f"a={a} b={b}"

    agent = Agent(nb, model=[tool_reply("obj", a=1, b=2), tool_reply("obj", headline="again", a=1, b=2), answer("done")])
    agent.register_tool(Tool(), name="obj")
    seen: list[str] = []

    def swap(response: object = None, **kwargs: object) -> None:
        seen.append(getattr(response, "message", ""))
        Tool.__call__ = wider  # type: ignore[method-assign]

    agent.register_extension("tool_execute_after", swap, name="swap")
    agent.ask("go")
    assert seen[:2] == ["a=1", "a=1 b=2"]  # (no code object to compare: its signature is read every time)


def test_a_forked_child_closes_the_workers_pipes() -> None:
    import os

    import pytest

    from a0nb.engine import tool_thread

    if not hasattr(os, "fork") or not hasattr(os, "register_at_fork"):
        pytest.skip("no fork here")
    _burst(2)
    fds = [fd for w in list(tool_thread._LIVE) for fd in (w.wake_r, w.wake_w) if fd >= 0]
    assert fds
    pid = os.fork()
    if pid == 0:  # the child: none of the parent's worker pipes is open
        still = 0
        for fd in fds:
            try:
                os.fstat(fd)
                still += 1
            except OSError:
                pass
        os._exit(min(still, 100))
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    for fd in fds:  # the parent's are untouched
        os.fstat(fd)
    assert _burst(2) == ["0 a0nb-tool-meet", "1 a0nb-tool-meet"]


def test_workers_whose_pipes_were_closed_under_them_end_and_fresh_ones_serve() -> None:
    import os

    from a0nb.engine import tool_thread

    _burst(2)
    # a worker whose pipe's write end code closed that does not own it: woken by the end of file, it leaves
    gone = next(w for w in reversed(tool_thread._IDLE) if w.go is None)
    gone_thread, gone_read = gone.thread, gone.wake_r
    os.close(gone.wake_w)
    gone_thread.join(5)
    assert not gone_thread.is_alive() and gone not in tool_thread._IDLE  # (not spinning on a dead pipe)
    os.close(gone_read)
    # a worker whose descriptor number is no longer open when a call wakes it: a fresh worker takes the call
    stale = [w for w in tool_thread._IDLE if w.go is None]
    real = [(w.wake_r, w.wake_w) for w in stale]
    for w in stale:
        w.wake_w = 1_000_000
    calls = len(stale) + 1  # (every idle worker is asked)
    assert _burst(calls) == [f"{i} a0nb-tool-meet" for i in range(calls)]
    assert not set(stale) & set(tool_thread._IDLE)
    for w, (read, write) in zip(stale, real):  # their threads, still waiting, end at the end of file
        os.close(write)
        w.thread.join(5)
        assert not w.thread.is_alive()
        os.close(read)
    assert _burst(2) == ["0 a0nb-tool-meet", "1 a0nb-tool-meet"]
