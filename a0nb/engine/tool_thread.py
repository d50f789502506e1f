"""Blocking tool code off the event loop, in reusable daemon threads.

Starting a thread for every tool call cost more CPU than the rest of a loop step; a finished worker waits
for the next call instead. What a fresh thread gave is kept: the call runs in a copy of the caller's
context, under the name `a0nb-tool-<function>`; a call the loop abandons (tool_timeout, interrupt) gets
CodeTimeout raised in its thread, and that thread is retired — it never runs another call, so a late
interrupt cannot land in someone else's tool; an abandoned call that ignores it keeps its thread, as before.

Handing a result back through the event loop (a future, a wake-up of its selector, two loop iterations)
cost more than a quick call itself: the loop thread first waits up to QUICK seconds for the result, and
only a call still running then is awaited (and can be timed out or interrupted) as before. The code always
runs in the worker; the loop is held up for QUICK at most. An idle worker waits reading its own pipe (see
_Worker): each worker holds two file descriptors, closed when it ends (and in a forked child)."""
from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import time
import types
from typing import Any, Callable, Generator

from a0nb.engine import wake_here
from a0nb.engine.timeouts import interrupt_thread

__all__ = ["in_daemon_thread", "run_limited"]

MAX_IDLE = 4  # idle workers kept; more (after many calls at once) end when their call does
IDLE_NAME = "a0nb-tool-idle"
QUICK = 0.002  # seconds the loop thread waits for a result before it awaits it


class _Job:
    __slots__ = ("fn", "kwargs", "context", "name", "done", "outcome", "loop", "future")

    def __init__(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        self.fn, self.kwargs = fn, kwargs
        self.context = contextvars.copy_context()
        self.name = f"a0nb-tool-{getattr(fn, '__name__', 'fn')}"
        self.done = threading.Lock()  # held until the outcome is in (for a loop thread waiting on it)
        self.done.acquire()
        self.outcome: tuple[bool, Any] | None = None
        # set (under _LOCK) once the loop thread stopped waiting: the outcome then settles this future
        self.loop: asyncio.AbstractEventLoop | None = None
        self.future: asyncio.Future[Any] | None = None

    def run(self) -> tuple[bool, Any]:
        try:
            return True, self.context.run(self.fn, **self.kwargs)
        except BaseException as exc:  # handed to the awaiting task (SystemExit included)
            return self.failure(exc)

    @staticmethod
    def failure(exc: BaseException) -> tuple[bool, Any]:
        keep = isinstance(exc, (Exception, SystemExit))  # run_tool reports SystemExit like any error
        return False, exc if keep else RuntimeError(repr(exc))

    def deliver(self, outcome: tuple[bool, Any]) -> None:
        """In the worker: the outcome to the waiting loop thread, or to the future it awaits (idempotent)."""
        with _LOCK:
            if self.outcome is None:
                self.outcome = outcome
            loop, future = self.loop, self.future
        if future is None:
            if self.done.locked():
                self.done.release()
            return
        try:
            loop.call_soon_threadsafe(_settle, future, *outcome)  # type: ignore[union-attr]
        except RuntimeError:  # the loop was closed meanwhile: nobody waits for the result
            pass


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if not future.done():
        (future.set_result if ok else future.set_exception)(value)


class _Worker:
    """A thread that runs one call at a time. It waits for its next call reading one byte from a pipe: a
    write to a pipe wakes a reader as the writer is about to wait (the kernel's synchronous wake-up, which
    tends to run it on the writer's CPU), where a lock or a queue wakes it on another CPU (an
    inter-processor interrupt; on a VM it cost about twice the rest of the hand-off)."""

    __slots__ = ("job", "retired", "thread", "wake_r", "wake_w", "go", "home")

    def __init__(self) -> None:
        self.job: _Job | None = None  # the call it runs (set before it is woken)
        self.retired = False
        self.go: threading.Lock | None = None
        self.home: wake_here.Home | None = None  # set as the thread starts: it is woken on its waker's CPU
        try:
            self.wake_r, self.wake_w = os.pipe()
        except OSError:  # no file descriptor left: a lock wakes it (more slowly)
            self.wake_r = self.wake_w = -1
            self.go = threading.Lock()
            self.go.acquire()
        self.thread = threading.Thread(target=self._main, name=IDLE_NAME, daemon=True)
        _LIVE.add(self)

    def close(self) -> None:
        """Its pipe closed (once: a descriptor number closed twice could be someone else's by then)."""
        _LIVE.discard(self)
        fds, self.wake_r, self.wake_w = (self.wake_r, self.wake_w), -1, -1
        for fd in fds:
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def _main(self) -> None:
        try:
            self.home = wake_here.home()
            self._serve()
        finally:
            self.close()

    def _serve(self) -> None:
        thread, wake, go, home = self.thread, self.wake_r, self.go, self.home
        while True:
            job: _Job | None = None
            outcome: tuple[bool, Any] | None = None
            try:
                if go is not None:
                    go.acquire()
                else:
                    try:
                        woken = os.read(wake, 1)
                    except OSError:  # its pipe was closed under it (by code that closes descriptors it does not own)
                        woken = b""
                    if not woken:
                        self._leave()
                        return
                if home is not None:
                    wake_here.widen(home)  # (woken on its waker's CPU: the whole mask back before the call)
                job = self.job
                thread.name = job.name  # type: ignore[union-attr]
                outcome = job.run()  # type: ignore[union-attr]
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
                    job.deliver(outcome)
                except BaseException:
                    job.deliver(outcome)
            if not stay:
                return

    def _leave(self) -> None:
        """Its pipe is gone: off the idle list for good (its descriptor numbers may be someone else's by now)."""
        with _LOCK:
            self.retired = True
            if self in _IDLE:
                _IDLE.remove(self)
            _LIVE.discard(self)
            self.wake_r = self.wake_w = -1

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
_LIVE: set[_Worker] = set()  # every worker whose pipe is open (idle or busy)


def _forget_workers() -> None:
    """In a forked child the parent's threads do not exist: start afresh."""
    global _LOCK
    _LOCK = threading.Lock()
    for worker in list(_LIVE):  # (their pipes were copied into the child)
        worker.close()
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
        try:
            worker.thread.start()
        except BaseException:
            worker.close()
            raise
    if worker.home is not None:
        wake_here.narrow(worker.home)
    if worker.go is not None:  # (its wake-up)
        worker.go.release()
        return worker
    try:
        os.write(worker.wake_w, b"\0")
    except OSError:  # its pipe was closed under it: a fresh worker takes the call
        with _LOCK:
            worker.job = None
        worker._leave()
        return _submit(job)
    return worker


def _abandon(worker: _Worker, job: _Job) -> None:
    """The loop left the call: stop its thread with an exception `except Exception` cannot catch, and retire it."""
    with _LOCK:
        if worker.job is job:
            worker.retired = True
            ident = worker.thread.ident
            if ident is not None:
                interrupt_thread(ident)


async def in_daemon_thread(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Run `fn(**kwargs)` in a daemon thread (an abandoned one never blocks interpreter exit)."""
    job = _Job(fn, kwargs)
    worker = _submit(job)
    try:
        quick = job.done.acquire(True, QUICK)
    except BaseException:  # (a KeyboardInterrupt in a loop on the main thread)
        _abandon(worker, job)
        raise
    if not quick:
        loop = asyncio.get_running_loop()
        with _LOCK:
            if job.outcome is None:  # still running: the worker settles a future from now on
                job.loop, job.future = loop, loop.create_future()
        if job.future is not None:
            try:
                return await job.future
            except asyncio.CancelledError:  # the loop's tool_timeout (or an interrupt) left it: stop the thread too
                _abandon(worker, job)
                raise
    ok, value = job.outcome  # type: ignore[misc]
    if ok:
        return value
    raise value


async def run_limited(awaitable: Any, limit: float, context: contextvars.Context | None = None) -> Any:
    """Await `awaitable` in the current task; after `limit` seconds the task is cancelled there and
    asyncio.TimeoutError raised (as asyncio.wait_for does, without a task and a future per call). A
    cancellation from elsewhere (an interrupt) still propagates as CancelledError. The timer is set only
    when the awaitable suspends: one that finishes in its first step (a quick call) needs none.
    `context`: every step of the awaitable runs in it (as in a task of its own, which runs in a copy)."""
    started = time.monotonic()
    steps = awaitable.__await__()
    try:
        pending = steps.send(None) if context is None else context.run(steps.send, None)
    except StopIteration as done:
        return done.value
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit - (time.monotonic() - started)  # (the first step's time counts)
    task = asyncio.current_task()
    assert task is not None
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    handle = loop.call_at(deadline, expire)
    try:
        return await _resume(steps, pending, context)
    except asyncio.CancelledError:
        uncancel = getattr(task, "uncancel", None)  # Python 3.11+: count out our own cancel
        if not expired or (uncancel is not None and uncancel() > 0):
            raise
        raise asyncio.TimeoutError() from None
    finally:
        handle.cancel()


@types.coroutine
def _resume(steps: Any, pending: Any, context: contextvars.Context | None) -> Generator[Any, Any, Any]:
    """The rest of an awaitable whose first step already ran (`yield from` from its second step on)."""
    run = context.run if context is not None else _call
    while True:
        try:
            sent = yield pending
        except GeneratorExit:
            run(steps.close)
            raise
        except BaseException as exc:
            try:
                pending = run(steps.throw, exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                pending = run(steps.send, sent)
            except StopIteration as done:
                return done.value


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)
