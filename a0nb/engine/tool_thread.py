"""Blocking tool code off the event loop, in reusable daemon threads.

Starting a thread for every tool call cost more CPU than the rest of a loop step; a finished worker waits
for the next call instead. What a fresh thread gave is kept: the call runs in a copy of the caller's
context, under the name `a0nb-tool-<function>`; a call the loop abandons (tool_timeout, interrupt) gets
CodeTimeout raised in its thread, and that thread is retired — it never runs another call, so a late
interrupt cannot land in someone else's tool; an abandoned call that ignores it keeps its thread, as before."""
from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
from typing import Any, Callable

from a0nb.engine.timeouts import interrupt_thread

__all__ = ["in_daemon_thread", "run_limited"]

MAX_IDLE = 4  # idle workers kept; more (after many calls at once) end when their call does
IDLE_NAME = "a0nb-tool-idle"


class _Job:
    __slots__ = ("fn", "kwargs", "context", "loop", "future", "name")

    def __init__(self, fn: Callable[..., Any], kwargs: dict[str, Any], loop: asyncio.AbstractEventLoop,
                 future: asyncio.Future[Any]) -> None:
        self.fn, self.kwargs, self.loop, self.future = fn, kwargs, loop, future
        self.context = contextvars.copy_context()
        self.name = f"a0nb-tool-{getattr(fn, '__name__', 'fn')}"

    def run(self) -> tuple[bool, Any]:
        try:
            return True, self.context.run(self.fn, **self.kwargs)
        except BaseException as exc:  # handed to the awaiting task (SystemExit included)
            return self.failure(exc)

    @staticmethod
    def failure(exc: BaseException) -> tuple[bool, Any]:
        keep = isinstance(exc, (Exception, SystemExit))  # run_tool reports SystemExit like any error
        return False, exc if keep else RuntimeError(repr(exc))

    def settle(self, ok: bool, value: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(_settle, self.future, ok, value)
        except RuntimeError:  # the loop was closed meanwhile: nobody waits for the result
            pass


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if not future.done():
        (future.set_result if ok else future.set_exception)(value)


class _Worker:
    __slots__ = ("jobs", "job", "retired", "thread")

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.job: _Job | None = None
        self.retired = False
        self.thread = threading.Thread(target=self._main, name=IDLE_NAME, daemon=True)

    def _main(self) -> None:
        thread = self.thread
        while True:
            job: _Job | None = None
            outcome: tuple[bool, Any] | None = None
            try:
                job = self.jobs.get()
                thread.name = job.name
                outcome = job.run()
            except BaseException as exc:  # an interrupt that landed outside the tool's own code
                if job is not None and outcome is None:
                    outcome = job.failure(exc)
            # back on the idle list before the result is handed over, so that the next call finds this thread
            try:
                stay = self._rest()
            except BaseException:  # a late interrupt landed in there: once more (it is idempotent)
                stay = self._rest()
            if job is not None and outcome is not None:
                try:
                    job.settle(*outcome)
                except BaseException:
                    job.settle(*outcome)
            if not stay:
                return

    def _rest(self) -> bool:
        """Done with a call: wait for the next one (True), or end — retired, or enough idle threads."""
        with _LOCK:
            self.job = None
            if self in _IDLE:  # (a second try, after an interrupt landed past the append)
                return True
            if self.retired or len(_IDLE) >= MAX_IDLE:
                return False
            self.thread.name = IDLE_NAME
            _IDLE.append(self)
            return True


_LOCK = threading.Lock()
_IDLE: list[_Worker] = []


def _forget_workers() -> None:
    """In a forked child the parent's threads do not exist: start afresh."""
    global _LOCK
    _LOCK = threading.Lock()
    _IDLE.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


def _submit(job: _Job) -> _Worker:
    with _LOCK:
        worker = _IDLE.pop() if _IDLE else None
        fresh = worker is None
        if worker is None:
            worker = _Worker()
        worker.job = job
    if fresh:
        worker.thread.start()
    worker.jobs.put(job)
    return worker


async def in_daemon_thread(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Run `fn(**kwargs)` in a daemon thread (an abandoned one never blocks interpreter exit)."""
    loop = asyncio.get_running_loop()
    job = _Job(fn, kwargs, loop, loop.create_future())
    worker = _submit(job)
    try:
        return await job.future
    except asyncio.CancelledError:  # the loop's tool_timeout (or an interrupt) left it: stop the thread too,
        with _LOCK:                 # with an exception `except Exception` cannot catch
            if worker.job is job:
                worker.retired = True
                ident = worker.thread.ident
                if ident is not None:
                    interrupt_thread(ident)
        raise


async def run_limited(awaitable: Any, limit: float) -> Any:
    """Await `awaitable` in the current task; after `limit` seconds the task is cancelled there and
    asyncio.TimeoutError raised (as asyncio.wait_for does, without a task and a future per call). A
    cancellation from elsewhere (an interrupt) still propagates as CancelledError."""
    loop, task = asyncio.get_running_loop(), asyncio.current_task()
    assert task is not None
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    handle = loop.call_later(limit, expire)
    try:
        return await awaitable
    except asyncio.CancelledError:
        uncancel = getattr(task, "uncancel", None)  # Python 3.11+: count out our own cancel
        if not expired or (uncancel is not None and uncancel() > 0):
            raise
        raise asyncio.TimeoutError() from None
    finally:
        handle.cancel()
