"""File events (Linux inotify): a per-step check that folders are unchanged, without a stat per path. A
`Quiet` taken before a full check vouches that nothing changed in its folders since.

The kernel queues an event while the write that causes it runs, so a check made after a tool's write sees it;
a change made on another machine (a network or a VM's shared folder) raises none, so a `Quiet` lasts MAX_AGE
seconds at most and the caller then looks at the files as before. Anything unusual (no inotify, its watch
limit reached, a folder missing, the event queue overflowing) makes `watch` or `quiet` say no: the caller
stats, as it would without file events. A0NB_FILE_EVENTS=0 turns them off."""
from __future__ import annotations

import os
import select
import struct
import sys
import threading
import time
from typing import Any, Callable, Iterable, TypeVar

T = TypeVar("T")

__all__ = ["Quiet", "FileEvents", "Inotify", "containing_folders", "folders_within", "quiet_for", "reuse", "shared"]

MAX_AGE = 1.0  # seconds a Quiet vouches for at most: then the files are looked at again
_KEPT_LAST = 65536  # watches whose last event is remembered
MAX_WATCHES = 4096  # folders watched at once at most (the user's limit is shared with editors and Jupyter itself)
# what changes a folder's listing or a file in it (reads, opens and closes without a write raise nothing)
_CREATE, _DELETE, _MODIFY, _ATTRIB, _CLOSE_WRITE = 0x100, 0x200, 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _DELETE_SELF, _MOVE_SELF = 0x40, 0x80, 0x400, 0x800
_Q_OVERFLOW, _IGNORED, _ONLYDIR = 0x4000, 0x8000, 0x01000000
MASK = (_CREATE | _DELETE | _MODIFY | _ATTRIB | _CLOSE_WRITE | _MOVED_FROM | _MOVED_TO | _DELETE_SELF
        | _MOVE_SELF | _ONLYDIR)
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)


class Quiet:
    """What a caller keeps between checks: its folders' watches and the feed's event count when it was taken."""

    __slots__ = ("feed", "wds", "seen", "until")

    def __init__(self, feed: FileEvents, wds: frozenset[int], seen: int) -> None:
        self.feed, self.wds, self.seen = feed, wds, seen
        self.until = time.monotonic() + MAX_AGE

    def quiet(self) -> bool:
        """True while no event touched its folders since it was taken (and for MAX_AGE at most)."""
        return self.feed.quiet(self)


class Inotify:
    """libc's two inotify calls on a non-blocking, close-on-exec descriptor. (inotify_simple does the same but
    looks libc up with ctypes.util.find_library, which runs `ldconfig -p` in a subprocess: ~35 ms on the first
    ask; libc's symbols are already in the process.)"""

    def __init__(self) -> None:
        import ctypes  # (a0nb.engine.timeouts imports it anyway)
        libc = ctypes.CDLL(None, use_errno=True)
        self._add, self._ctypes = libc.inotify_add_watch, ctypes
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.fd = fd

    def fileno(self) -> int:
        return self.fd

    def add_watch(self, path: str, mask: int) -> int:
        wd = self._add(self.fd, os.fsencode(path), mask)
        if wd < 0:
            errno = self._ctypes.get_errno()
            raise OSError(errno, os.strerror(errno), path)
        return int(wd)

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)


class FileEvents:
    """One inotify instance for the process: folders are watched once and stay watched (a watch ends by
    itself when its folder is deleted); every check first reads what the kernel queued."""

    def __init__(self, notify: Any) -> None:
        self._notify = notify  # an Inotify (or anything with fileno, add_watch and close), open while the feed lives
        self._fd = notify.fileno()
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)
        self._lock = threading.Lock()
        self._wds: dict[str, int] = {}
        self._count = 0  # events read so far
        self._last: dict[int, int] = {}  # watch -> the count at its last event
        self._lost = 0  # the count when events were lost (the queue overflowed): every older Quiet is void
        self._closed = False

    def watch(self, folders: Iterable[str]) -> Quiet | None:
        """A Quiet over `folders`, or None when one cannot be watched (missing, not a folder, no watch left)."""
        with self._lock:
            if self._closed:
                return None
            self._drain()
            wds = set()
            for folder in folders:
                wd = self._wds.get(folder)
                if wd is None:
                    if len(self._wds) >= MAX_WATCHES:
                        return None
                    try:
                        wd = self._notify.add_watch(folder, MASK)
                    except (OSError, ValueError):
                        return None
                    self._wds[folder] = wd
                wds.add(wd)
            return Quiet(self, frozenset(wds), self._count)

    def quiet(self, q: Quiet) -> bool:
        if time.monotonic() > q.until or self._closed:
            return False
        with self._lock:
            if self._closed:
                return False
            if self._poll.poll(0):
                self._drain()
            count = self._count
            if count == q.seen:
                return True
            if self._lost > q.seen:
                return False
            last = self._last
            for wd in q.wds:
                if last.get(wd, 0) > q.seen:
                    return False
            q.seen = count  # (events elsewhere only: the next check is one comparison again)
            return True

    def close(self) -> None:
        """No Quiet of it holds from now on. Takes no lock: a forked child calls it, where another thread of the
        parent may have held the lock at the fork."""
        self._closed = True
        try:
            self._notify.close()
        except OSError:
            pass

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self._fd, 65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # the descriptor is gone (closed under it): nothing can be vouched for any more
                self._count += 1
                self._lost = self._count
                return
            if not data:  # (a descriptor at its end, which inotify's never is: nothing more to read)
                return
            pos, end = 0, len(data)
            while pos + _HEADER.size <= end:
                wd, mask, _cookie, size = _HEADER.unpack_from(data, pos)
                pos += _HEADER.size + size
                self._count += 1
                if mask & _Q_OVERFLOW:
                    self._lost = self._count
                    continue
                if len(self._last) >= _KEPT_LAST and wd not in self._last:  # (a kernel that watched many folders)
                    self._last.clear()
                    self._lost = self._count  # (what was forgotten voids every Quiet taken before)
                self._last[wd] = self._count
                if mask & _IGNORED:  # its folder was deleted or unmounted: a new watch takes its place if asked
                    for folder in [f for f, w in self._wds.items() if w == wd]:
                        del self._wds[folder]


def _open() -> FileEvents | None:
    if not sys.platform.startswith("linux") or os.environ.get("A0NB_FILE_EVENTS", "1").strip() in ("0", "off", "no"):
        return None
    try:
        return FileEvents(Inotify())
    except (OSError, AttributeError):  # no inotify instance left for this user; a libc without inotify
        return None


class _Shared:
    """The process's feed, opened on first use. Process-wide by nature, like the kernel object behind it (and
    like sys.modules): every agent in the process reads the one queue."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.feed: FileEvents | None = None
        self.opened = False

    def get(self) -> FileEvents | None:
        if not self.opened:
            with self.lock:
                if not self.opened:
                    self.feed, self.opened = _open(), True
        return self.feed

    def forget(self) -> None:
        """In a forked child: the parent's queue is not this process's to read."""
        self.lock = threading.Lock()
        feed, self.feed, self.opened = self.feed, None, False
        if feed is not None:
            feed.close()


_SHARED = _Shared()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_SHARED.forget)


def shared() -> FileEvents | None:
    """The process's file events, or None (not Linux, no inotify instance left, A0NB_FILE_EVENTS=0)."""
    return _SHARED.get()


def quiet_for(folders: Iterable[str]) -> Quiet | None:
    """A Quiet over `folders` from the process's feed, to take before a full check; None without file events."""
    feed = _SHARED.get()
    return None if feed is None else feed.watch(folders)


def containing_folders(paths: Iterable[str]) -> list[str]:
    """The folder each path would be created in: its nearest existing ancestor (a file appearing there, or a
    folder on the way to it, is an event in that folder)."""
    out: dict[str, None] = {}
    for path in paths:
        folder = os.path.dirname(path)
        while folder and not os.path.isdir(folder):
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        out[folder] = None
    return list(out)


def folders_within(path: str, hidden: bool = True) -> list[str]:
    """`path` and every folder under it (without hidden ones when `hidden` is False), or, when it is not a
    folder, the folder it would appear in."""
    if not os.path.isdir(path):
        return containing_folders([path])
    out: list[str] = []
    for root, dirs, _files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if hidden or not d.startswith("."))
        out.append(root)
    return out


def reuse(kept: tuple[Quiet, T] | None, folders: Callable[[], Iterable[str]],
          look: Callable[[], T]) -> tuple[T, tuple[Quiet, T] | None]:
    """The value `kept` holds while its Quiet stands; else `look()`, with a Quiet over `folders()` taken before
    it: (the value, what to keep for the next time, None without file events)."""
    if kept is not None and kept[0].quiet():
        return kept[1], kept
    quiet = quiet_for(folders())
    value = look()
    return value, (quiet, value) if quiet is not None else None
