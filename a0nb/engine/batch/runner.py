"""Runs a batch's items on a backend with at most `concurrency` in flight, in any completion order, and
stops cleanly on an interrupt: pending items are cancelled, running ones asked to stop, finished ones kept."""
from __future__ import annotations

import concurrent.futures as cf
import concurrent.futures.process
import threading
import time
from typing import Any, Protocol

from a0nb.engine.batch.result import Progress
from a0nb.engine.batch.worker import AgentSpec, Live, SerialBridge, run_item, turn_from_dict, turn_to_dict
from a0nb.engine.turn import Turn

__all__ = ["Backend", "ExecutorBackend", "ThreadBackend", "schedule", "run_item_plain"]

POLL = 0.1        # seconds between looks at the futures (and the interrupt)
GRACE = 5.0       # seconds running items get to stop after an interrupt


class Backend(Protocol):
    name: str

    def submit(self, index: int, prompt: str) -> cf.Future[Any]: ...

    def outcome(self, index: int, prompt: str, future: cf.Future[Any]) -> Turn: ...

    def interrupt(self, index: int, future: cf.Future[Any]) -> None: ...

    def close(self) -> None: ...


def schedule(backend: Backend, prompts: list[str], concurrency: int, progress: Progress) -> tuple[list[Turn], bool]:
    """The Turns in input order, and whether the run was interrupted."""
    turns: list[Turn | None] = [None] * len(prompts)
    running: dict[cf.Future[Any], int] = {}
    following = 0
    interrupted = False

    def collect(done: set[cf.Future[Any]]) -> None:
        for future in done:
            i = running.pop(future)
            turns[i] = backend.outcome(i, prompts[i], future)
            progress.finish(turns[i])  # type: ignore[arg-type]

    try:
        while following < len(prompts) or running:
            while following < len(prompts) and len(running) < concurrency:
                running[backend.submit(following, prompts[following])] = following
                progress.start()
                following += 1
            done, _ = cf.wait(running, timeout=POLL, return_when=cf.FIRST_COMPLETED)
            collect(done)
            progress.notify()
    except KeyboardInterrupt:
        interrupted = True
        deadline = time.monotonic() + GRACE
        while running and time.monotonic() < deadline:
            for future, i in running.items():
                backend.interrupt(i, future)  # repeated: an item may have built its agent since
            try:
                done, _ = cf.wait(running, timeout=POLL, return_when=cf.FIRST_COMPLETED)
            except KeyboardInterrupt:
                break  # a second interrupt: stop waiting for the running items
            collect(done)
        for future, i in running.items():
            future.cancel()
            turns[i] = Turn(1, prompts[i], error="interrupted: still running when the batch was interrupted",
                            interrupted=True)
            progress.finish(turns[i])  # type: ignore[arg-type]
        running.clear()
    finally:
        backend.close()
    for i, turn in enumerate(turns):
        if turn is None:
            turns[i] = Turn(1, prompts[i], error="cancelled: the batch was interrupted before this item started",
                            interrupted=True)
            progress.finish(turns[i], was_running=False)  # type: ignore[arg-type]
    return [t for t in turns if t is not None], interrupted


class ThreadBackend:
    """Each item in a thread of this process: agents share the notebook's providers registered from a cell
    (Crystal Lattice), its approver and a copy of its namespace; code they run takes turns (SerialBridge)."""

    name = "threads"

    def __init__(self, spec: AgentSpec, concurrency: int, shared: dict[str, Any]) -> None:
        self.spec, self.shared = spec, shared
        self.pool = cf.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="a0nb-map")
        self.live = Live()
        self.serial = threading.Lock()

    def submit(self, index: int, prompt: str) -> cf.Future[Any]:
        shared = dict(self.shared)
        if "namespace" in shared:
            shared["namespace"] = dict(shared["namespace"])  # each item reads the notebook's variables, writes its own
        return self.pool.submit(run_item, self.spec, index, prompt, live=self.live,
                                bridge=SerialBridge(self.serial), **shared)

    def outcome(self, index: int, prompt: str, future: cf.Future[Any]) -> Turn:
        try:
            turn: Turn = future.result()
            return turn
        except Exception as exc:  # noqa: BLE001 - run_item catches per-item errors; this is a last resort
            return Turn(1, prompt, error=f"{type(exc).__name__}: {exc}")

    def interrupt(self, index: int, future: cf.Future[Any]) -> None:
        future.cancel()
        self.live.interrupt(index)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def run_item_plain(spec: AgentSpec, index: int, prompt: str) -> dict[str, Any]:
    """`run_item` for other processes: the Turn as plain data (module-level, so executors can pickle it)."""
    return turn_to_dict(run_item(spec, index, prompt))


class ExecutorBackend:
    """Any `concurrent.futures.Executor` (a ProcessPoolExecutor, a dask or loky executor, ...); the caller
    owns it. Items whose process died report it; a pool that breaks fails the items it still held."""

    def __init__(self, executor: cf.Executor, spec: AgentSpec) -> None:
        self.executor, self.spec = executor, spec
        self.name = type(executor).__name__

    def submit(self, index: int, prompt: str) -> cf.Future[Any]:
        return self.executor.submit(run_item_plain, self.spec, index, prompt)

    def outcome(self, index: int, prompt: str, future: cf.Future[Any]) -> Turn:
        try:
            return turn_from_dict(future.result())
        except concurrent.futures.process.BrokenProcessPool as exc:
            return Turn(1, prompt, error=f"worker died: the process pool broke while this item ran ({exc}); "
                                         "the items that finished before are kept")
        except cf.CancelledError:
            return Turn(1, prompt, error="cancelled: the batch was interrupted", interrupted=True)
        except Exception as exc:  # noqa: BLE001 - e.g. a pickling error: this item fails, the rest go on
            return Turn(1, prompt, error=f"{type(exc).__name__}: {exc}")

    def interrupt(self, index: int, future: cf.Future[Any]) -> None:
        future.cancel()  # a running item in another process cannot be reached: it finishes or is dropped

    def close(self) -> None:
        return None
