"""Time limits agent code cannot catch: `CodeTimeout` (a BaseException) raised in the running thread, again
every half second until it leaves, and the child processes it started killed (so a blocking `os.system`
or `subprocess.run` returns)."""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
from typing import Iterator

from a0nb.errors import CodeTimeout

__all__ = ["CodeTimeout", "interrupt_thread", "kill_children", "time_limit"]

REPEAT = 0.5  # seconds between further interrupts for code that swallowed the first one


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise CodeTimeout in the calling thread after `seconds` (None or 0: no limit)."""
    if not seconds or seconds <= 0:
        yield
        return
    before = _descendants()
    stop = threading.Event()
    on_main = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    target = threading.get_ident()

    def watchdog() -> None:
        if stop.wait(seconds):
            return
        while not stop.is_set():
            kill_children(before)
            if not on_main:
                interrupt_thread(target)
            stop.wait(REPEAT)

    active = [True]

    def on_alarm(signum: int, frame: object) -> None:
        if active[0]:
            raise CodeTimeout(f"the code ran longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm) if on_main else None
    if on_main:
        signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT)
    threading.Thread(target=watchdog, name="a0nb-time-limit", daemon=True).start()
    try:
        yield
    finally:
        while True:  # an alarm landing inside this cleanup must not skip it
            try:
                active[0] = False
                stop.set()
                if on_main:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    signal.signal(signal.SIGALRM, previous)
                break
            except CodeTimeout:
                continue


def interrupt_thread(ident: int) -> bool:
    """Raise CodeTimeout in another Python thread at its next bytecode (not inside a blocking C call)."""
    done = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(CodeTimeout))
    return bool(done == 1)


def kill_children(keep: set[int] = frozenset()) -> list[int]:  # type: ignore[assignment]
    """SIGKILL every descendant process of this one not in `keep` (with its process group when it leads
    one of its own); returns the pids killed."""
    killed = []
    for pid in sorted(_descendants() - set(keep)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.getpgid(pid) == pid and pid != os.getpgid(0):
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return killed


def _descendants() -> set[int]:
    try:
        import psutil  # ipykernel's dependency; imported only when a time limit is set
    except ImportError:
        return set()
    with contextlib.suppress(psutil.Error):
        return {p.pid for p in psutil.Process().children(recursive=True)}
    return set()
