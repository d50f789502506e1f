"""Waking an idle worker thread on the waker's own CPU (Linux; elsewhere a no-op).

A quick tool call hands its work to an idle worker and waits for the result: two wake-ups. Left to
itself, the scheduler wakes the worker on another CPU when one is idle, and on a virtual machine that
is an inter-processor interrupt and a virtual CPU leaving its halt, twice per call: measured on the
2-vCPU build machine, a hand-off cost 60-130 us of the process's CPU time that way against about 15 us
when the worker woke on the waiting thread's CPU (benchmarks/results/latest.md has the loop figures).

So the waker narrows the sleeping worker's affinity to the CPU it runs on (`narrow`) just before it
wakes it, and the worker widens its affinity back to its own mask (`widen`) as soon as it is awake,
before any tool code runs: a tool, and every thread it starts, runs with the mask the worker was
started with. This is a hint. Where the platform has no sched_setaffinity or sched_getcpu, where the
process may use only one CPU, or once the kernel refuses a mask, nothing is narrowed."""
from __future__ import annotations

import os
import threading
from typing import Callable

__all__ = ["Home", "home", "narrow", "steering", "widen"]

_enabled = hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity")
_getcpu: Callable[[], int] | None = None


class Home:
    """A worker thread's native id and the CPU mask it started with (its own affinity, inherited)."""

    __slots__ = ("tid", "mask", "narrowed")

    def __init__(self, tid: int, mask: frozenset[int]) -> None:
        self.tid, self.mask = tid, mask
        self.narrowed = False


def home() -> Home | None:
    """In a worker thread as it starts: what `narrow` and `widen` need, or None where steering is off."""
    if not _enabled:
        return None
    try:
        mask = frozenset(os.sched_getaffinity(0))
    except OSError:
        return None
    return Home(threading.get_native_id(), mask) if len(mask) > 1 else None


def narrow(worker: Home) -> None:
    """In the waking thread, before the wake-up: the sleeping worker may run only on this thread's CPU."""
    global _enabled
    getcpu = _getcpu or _load_getcpu()
    if getcpu is None or not _enabled:
        return
    cpu = getcpu()
    if cpu not in worker.mask:
        return
    try:
        os.sched_setaffinity(worker.tid, (cpu,))
    except OSError:  # a cpuset changed under us, or the thread is gone: stop steering rather than guess
        _enabled = False
        return
    worker.narrowed = True


def widen(worker: Home) -> None:
    """In the worker, once awake: its whole mask back (before it runs anything of a tool's)."""
    global _enabled
    if worker.narrowed:
        try:
            os.sched_setaffinity(0, worker.mask)
        except OSError:  # the mask it started with is no longer allowed (a cpuset shrank): the main
            _enabled = False  # thread's mask instead, and no more narrowing
            try:
                os.sched_setaffinity(0, os.sched_getaffinity(os.getpid()))
            except OSError:
                pass
        worker.narrowed = False


def steering() -> bool:
    """Whether `narrow` still narrows (False on platforms without it, or after the kernel refused once)."""
    return _enabled


def _load_getcpu() -> Callable[[], int] | None:
    """libc's sched_getcpu, loaded on first use (ctypes is not imported with a0nb), or None."""
    global _getcpu, _enabled
    if not _enabled:
        return None
    try:
        import ctypes
        fn = ctypes.PyDLL(None).sched_getcpu  # PyDLL: called with the GIL held (a few ns, no release)
        fn.restype, fn.argtypes = ctypes.c_int, []
        if fn() < 0:
            raise OSError("sched_getcpu failed")
    except (OSError, AttributeError, ImportError):
        _enabled = False
        return None
    _getcpu = fn
    return fn
