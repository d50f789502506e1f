"""Output of agent code captured at the file-descriptor level: fd 1 and 2 (so `print`, `os.system`, child
processes and C extensions alike) go to a pipe that a thread reads, masks and bounds (head + tail) as it
arrives, and hands to the live view; `display()` is masked; late writers never block the tool."""
from __future__ import annotations

import codecs
import contextlib
import io
import os
import select
import sys
import threading
import time
import weakref
from typing import Any, Callable, Iterator

from a0nb.files.secrets import Secrets, StreamMasker

__all__ = ["Bounded", "Capture", "capture_output"]

READ = 1 << 16
GRACE = 0.3        # seconds the tool waits, after the code ended, for children still holding the output
PROGRESS_EVERY = 0.1  # seconds between live-view updates (a flood must not become a flood of events)


class Bounded:
    """Text kept as head + tail within `limit` characters; what falls between is counted, not kept."""

    def __init__(self, limit: int) -> None:
        self.head_limit = max(0, limit // 2)
        self.tail_limit = max(0, limit - self.head_limit)
        self.head: list[str] = []
        self.head_len = 0
        self.tail: list[str] = []
        self.tail_len = 0
        self.total = 0

    def add(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        room = self.head_limit - self.head_len
        if room > 0:
            self.head.append(text[:room])
            self.head_len += min(room, len(text))
            text = text[room:]
        if not text or not self.tail_limit:
            return
        self.tail.append(text[-self.tail_limit:])
        self.tail_len += min(len(text), self.tail_limit)
        while self.tail and self.tail_len - len(self.tail[0]) >= self.tail_limit:
            self.tail_len -= len(self.tail.pop(0))

    @property
    def dropped(self) -> int:
        return self.total - self.head_len - min(self.tail_len, self.tail_limit)

    def text(self, marker: Callable[[int], str] = lambda n: f"\n[... {n} characters of output not kept ...]\n") -> str:
        tail = "".join(self.tail)[-self.tail_limit:] if self.tail_limit else ""
        dropped = self.dropped
        return "".join(self.head) + (marker(dropped) if dropped > 0 else "") + tail


class _FdWriter(io.TextIOBase):
    """`sys.stdout`/`sys.stderr` while code runs: straight to the file descriptor, so that Python prints
    and fd-level output keep their order in the one pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        data = str(text).encode("utf-8", errors="replace")
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]
        return len(text)

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return False


class Capture:
    """One run's output: masked, bounded, streamed to `on_progress` (masked text so far, at most every
    PROGRESS_EVERY seconds). `still_running` says children kept the output open after the code ended."""

    def __init__(self, secrets: Secrets | None, limit: int, on_progress: Callable[[str], None] | None) -> None:
        self.masker = StreamMasker(secrets) if secrets else None
        self.kept = Bounded(limit)
        self.on_progress = on_progress
        self.still_running = False
        self._lock = threading.Lock()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._last = 0.0
        self._pending = False
        self._done = threading.Event()

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        with self._lock:
            if self.masker is not None:
                text = self.masker.feed(text) + (self.masker.flush() if final else "")
            self.kept.add(text)
        if text:  # an empty feed (the final one, when nothing was held back) has nothing new to show
            self._pending = True
        if final or time.monotonic() - self._last >= PROGRESS_EVERY:
            self.tick()

    def tick(self) -> None:
        """Hand the output so far to the live view, if anything arrived since the last time."""
        if self.on_progress is not None and self._pending:
            self._pending, self._last = False, time.monotonic()
            self.on_progress(self.text())

    def _read(self, fd: int) -> None:
        # poll, not select: a process with many files open gets pipe numbers past select's FD_SETSIZE (1024)
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        try:
            while True:
                if not poller.poll(PROGRESS_EVERY * 1000):
                    self.tick()  # a quiet moment: what arrived last reaches the live view now
                    continue
                data = os.read(fd, READ)
                if not data:
                    break
                self.feed(data)
        except OSError:
            pass
        finally:
            os.close(fd)
            self.close()

    def close(self) -> None:
        """The output ended: the masker's held-back tail is released (masked)."""
        self.feed(b"", final=True)
        self._done.set()

    def text(self) -> str:
        with self._lock:
            return self.kept.text()


@contextlib.contextmanager
def capture_output(secrets: Secrets | None, limit: int,
                   on_progress: Callable[[str], None] | None = None) -> Iterator[Capture]:
    """Redirect fd 1 and 2 (and `sys.stdout`/`sys.stderr`, and `display()` in IPython) for the block."""
    capture = Capture(secrets, limit, on_progress)
    threads_before = set(threading.enumerate())
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.flush()  # what was written before belongs to the output before
    read_fd, write_fd = os.pipe()
    saved = (os.dup(1), os.dup(2))
    os.dup2(write_fd, 1)
    os.dup2(write_fd, 2)
    os.close(write_fd)
    reader = threading.Thread(target=capture._read, args=(read_fd,), name="a0nb-output", daemon=True)
    reader.start()
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _FdWriter(1), _FdWriter(2)  # type: ignore[assignment]
    restore_display = _mask_display(secrets)
    try:
        yield capture
    finally:
        restore_display()
        for dunder in (sys.__stdout__, sys.__stderr__):
            if dunder is not None:
                with contextlib.suppress(Exception):
                    dunder.flush()
        sys.stdout, sys.stderr = _outliving(streams, threads_before, secrets)
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
        # the pipe ends with the last writer; a child still holding it (a daemon) must not block the tool:
        # the reader goes on draining it (masked, bounded) in the background
        capture.still_running = not capture._done.wait(GRACE)


class _OutlivingThreads:
    """`sys.stdout`/`sys.stderr` after a run whose threads outlive it: what those threads print later is
    masked; every other write passes through unchanged. Everything else is the wrapped stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._threads: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
        self._secrets: Secrets | None = None

    def write(self, text: str) -> int:
        if self._secrets is not None and threading.current_thread() in self._threads:
            text = self._secrets.mask_text(str(text))
        return int(self._stream.write(text) or 0)

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _outliving(streams: tuple[Any, Any], before: set[threading.Thread], secrets: Secrets | None) -> tuple[Any, Any]:
    late = [t for t in threading.enumerate() if t not in before and t.is_alive() and not t.name.startswith("a0nb-")]
    if not late or not secrets:
        return streams
    wrapped = []
    for stream in streams:
        if not isinstance(stream, _OutlivingThreads):
            stream = _OutlivingThreads(stream)
        stream._threads.update(late)
        stream._secrets = secrets
        wrapped.append(stream)
    return wrapped[0], wrapped[1]


def _mask_display(secrets: Secrets | None) -> Callable[[], None]:
    """While code runs, `display()` output is masked like printed output (no-op outside IPython)."""
    shell = _ipython()
    publisher = getattr(shell, "display_pub", None)
    if publisher is None or not secrets:
        return lambda: None
    original = publisher.publish

    def publish(data: Any = None, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
        return original(secrets.mask(data), secrets.mask(metadata), *args, **kwargs)

    own = "publish" in vars(publisher)
    publisher.publish = publish

    def restore() -> None:
        if own:
            publisher.publish = original
        else:
            vars(publisher).pop("publish", None)
    return restore


def _ipython() -> Any:
    module = sys.modules.get("IPython")
    if module is None:
        return None
    with contextlib.suppress(Exception):
        return module.get_ipython()
    return None
