"""One execution model: agent coroutines run on a private event-loop thread; the calling thread
waits, serves main-thread jobs (user code, approval prompts, displays) and turns Ctrl-C or a kernel
interrupt into a cancellation the loop sees at its next checkpoint. Works with or without a running loop."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import threading
import weakref
from typing import Any, Awaitable, Callable, TypeVar

T = TypeVar("T")


class Bridge:
    """Owns one background event loop. `run()` is the sync edge; `on_main()` the way back."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._waiting_thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.interrupt_grace = 2.0
        self._on_interrupt: Callable[[], None] | None = None
        self._waiting_loop: asyncio.AbstractEventLoop | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                self._loop = asyncio.new_event_loop()
                ready = threading.Event()
                self._thread = threading.Thread(target=self._serve, args=(self._loop, ready),
                                                name="a0nb-agent-loop", daemon=True)
                self._thread.start()
                ready.wait()
                # a bridge nobody holds any more (its agents were collected) stops its thread and closes its
                # loop, so that a process making many agents (a test run, a batch) does not gather threads and files
                weakref.finalize(self, _stop, self._loop).atexit = False
            return self._loop

    @staticmethod
    def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        while True:
            try:
                loop.run_forever()
                break  # stopped by close() or by the finalizer
            except (SystemExit, KeyboardInterrupt):
                continue  # a stray BaseException from a task must not kill the loop every turn runs on
        _shut(loop)

    def in_loop_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def run(self, make: Callable[[], Awaitable[T]], on_interrupt: Callable[[], None] | None = None) -> T:
        """Run `make()` on the agent loop and wait, serving main-thread jobs meanwhile.

        A KeyboardInterrupt while waiting calls `on_interrupt` (which asks the turn to stop at its next
        checkpoint) and keeps waiting up to `interrupt_grace` seconds for the turn to wind down."""
        if self.in_loop_thread():
            raise RuntimeError("Agent.ask() was called from inside the agent's own loop; use `await agent.ask_async()`")
        future = asyncio.run_coroutine_threadsafe(_wrap(make), self.loop)
        future.add_done_callback(lambda _f: self._jobs.put(_noop))  # wake the waiting thread at once
        previous, self._waiting_thread = self._waiting_thread, threading.current_thread()
        self._on_interrupt = on_interrupt
        deadline: float | None = None
        try:
            while True:
                try:
                    self._serve_jobs(future)
                    if future.done():
                        return future.result()
                    if self._thread is not None and not self._thread.is_alive():
                        raise RuntimeError("the agent's event loop thread stopped unexpectedly; "
                                           "the turn cannot finish (this is a bug in a0nb: please report it)")
                    if deadline is not None and self.loop.time() > deadline:
                        future.cancel()
                        raise KeyboardInterrupt
                except KeyboardInterrupt:
                    if deadline is not None:
                        raise
                    deadline = self.loop.time() + self.interrupt_grace
                    if on_interrupt is not None:
                        on_interrupt()
        finally:
            self._waiting_thread = previous

    async def run_async(self, make: Callable[[], Awaitable[T]], on_interrupt: Callable[[], None] | None = None) -> T:
        """Await `make()` on the agent loop from ANOTHER running loop (a kernel's) without blocking it, so the
        front end's widget messages are served during the turn. Main-thread jobs are scheduled on the caller's
        loop. A cancellation of the awaiting task (ipykernel turns a kernel interrupt into one) asks the turn to
        stop at its next checkpoint and waits up to `interrupt_grace` for it."""
        caller = asyncio.get_running_loop()
        if caller is self._loop:
            return await make()
        future = asyncio.run_coroutine_threadsafe(_wrap(make), self.loop)
        wrapped = asyncio.wrap_future(future)
        saved = (self._waiting_thread, self._waiting_loop, self._on_interrupt)
        self._waiting_thread, self._waiting_loop = threading.current_thread(), caller
        self._on_interrupt = on_interrupt
        try:
            try:
                return await asyncio.shield(wrapped)
            except asyncio.CancelledError:
                if on_interrupt is not None:
                    on_interrupt()
                try:
                    return await asyncio.wait_for(asyncio.shield(wrapped), self.interrupt_grace)
                except asyncio.TimeoutError:
                    future.cancel()
                    from a0nb.errors import TurnInterrupted
                    raise TurnInterrupted("the turn did not stop in time after the interrupt and was cancelled") from None
        finally:
            self._waiting_thread, self._waiting_loop, self._on_interrupt = saved

    def _serve_jobs(self, future: concurrent.futures.Future[Any]) -> None:
        try:
            job = self._jobs.get(timeout=0.1)
        except queue.Empty:
            return
        job()

    async def on_main(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(*args)` on the thread that is waiting in `run()` (the kernel's main thread).

        When a kernel's loop is waiting (`run_async`) and `fn` has an `on_loop` coroutine function, that coroutine
        runs as a task on the kernel's loop instead: it may wait for the front end (a click on a widget) without
        blocking the loop that delivers the front end's messages."""
        on_loop = getattr(fn, "on_loop", None)
        if on_loop is not None and self._waiting_loop is not None and self.in_loop_thread():
            result: T = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(on_loop(*args), self._waiting_loop))
            return result
        if self._waiting_thread is None or not self.in_loop_thread():
            return fn(*args)
        done: concurrent.futures.Future[T] = concurrent.futures.Future()

        def job() -> None:
            if not done.set_running_or_notify_cancel():
                return
            try:
                done.set_result(fn(*args))
            except KeyboardInterrupt:
                # asyncio must never see a KeyboardInterrupt inside a task: it becomes the turn's interruption
                from a0nb.errors import TurnInterrupted
                done.set_exception(TurnInterrupted("interrupted while running code on the main thread"))
                if self._on_interrupt is not None:
                    self._on_interrupt()
            except Exception as exc:
                done.set_exception(exc)
            except BaseException as exc:  # SystemExit and kin must never reach the agent's event loop
                done.set_exception(RuntimeError(f"{type(exc).__name__}: {exc}"))

        if self._waiting_loop is not None:
            # the waiting thread runs an event loop (a kernel): run the job there, interruptible by Ctrl-C
            self._waiting_loop.call_soon_threadsafe(_interruptible, job)
        else:
            self._jobs.put(job)
        return await asyncio.wrap_future(done)

    def close(self) -> None:
        with self._lock:
            if self._loop is not None and self._thread is not None and self._thread.is_alive():
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(timeout=2)
            self._loop = None
            self._thread = None


def _stop(loop: asyncio.AbstractEventLoop) -> None:
    with contextlib.suppress(RuntimeError):  # already closed
        loop.call_soon_threadsafe(loop.stop)


def _shut(loop: asyncio.AbstractEventLoop) -> None:
    """On the loop's own thread, once it stopped: what still runs there is cancelled, then the loop is closed
    (its selector and wake-up sockets released)."""
    try:
        tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            loop.run_until_complete(asyncio.wait(tasks, timeout=1.0))
        loop.run_until_complete(loop.shutdown_asyncgens())
    except BaseException:  # (a task that refuses to end must not keep the loop's files open)
        pass
    finally:
        loop.close()


def _interruptible(job: Callable[[], None]) -> None:
    """While user code runs on the main thread, SIGINT raises KeyboardInterrupt there (ipykernel otherwise
    turns it into a cancellation of the awaiting cell, which would wait for the code to finish)."""
    import signal
    if threading.current_thread() is not threading.main_thread():
        job()
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        job()
    finally:
        signal.signal(signal.SIGINT, previous)


def _noop() -> None:
    return None


async def _wrap(make: Callable[[], Awaitable[T]]) -> T:
    return await make()
