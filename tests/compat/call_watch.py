"""Watches one placed file from outside while a turn runs (see `CallWatch`)."""
from __future__ import annotations

import contextlib
import os
import sys
import threading
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Iterator


@dataclass
class CallWatch:
    """What happened to one file's code after its module body finished, seen from outside: which of its
    functions were called, at which extension points a0nb invoked it (a0nb's `_invoke(info, ...)` frames),
    and which exceptions escaped from its functions (a tracer on its frames only), in every thread."""

    filename: str
    body_done: bool = False
    called: list[str] = field(default_factory=list)
    points: list[str] = field(default_factory=list)
    escaped: list[str] = field(default_factory=list)
    _raised: dict[int, Any] = field(default_factory=dict)

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        code = frame.f_code
        if code.co_filename != self.filename:
            if event == "call" and code.co_name == "_invoke" and code.co_filename.endswith(_INVOKER):
                info = frame.f_locals.get("info")
                if info is not None and str(getattr(info, "path", "")) == self.filename:
                    self.points.append(info.point)
            return
        if code.co_name == "<module>":
            if event == "return":
                self.body_done = True
            return
        if event == "call" and self.body_done and code.co_name not in self.called:
            self.called.append(code.co_name)

    def _trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        return self._local if frame.f_code.co_filename == self.filename else None

    def _local(self, frame: FrameType, event: str, arg: Any) -> Any:
        """An `exception` event followed by the frame's `return` (no line ran in between) is an escape."""
        if event == "exception":
            self._raised[id(frame)] = arg[1]
        elif event == "line":
            self._raised.pop(id(frame), None)
        elif event == "return":
            exc = self._raised.pop(id(frame), None)
            if exc is not None and arg is None and self.body_done and frame.f_code.co_name != "<module>" \
                    and not isinstance(exc, _NOT_ERRORS):
                self.escaped.append(f"{frame.f_code.co_name}: {type(exc).__name__}: {exc}")
        return self._local

    @contextlib.contextmanager
    def active(self) -> Iterator["CallWatch"]:
        old, old_trace = sys.getprofile(), sys.gettrace()
        sys.setprofile(self._profile)
        threading.setprofile(self._profile)
        sys.settrace(self._trace)
        threading.settrace(self._trace)
        try:
            yield self
        finally:
            sys.setprofile(old)
            threading.setprofile(None)  # type: ignore[arg-type]
            sys.settrace(old_trace)
            threading.settrace(None)  # type: ignore[arg-type]


_INVOKER = os.path.join("a0nb", "files", "extensions.py")
# how generators and coroutines end or are closed, not errors of the file
_NOT_ERRORS = (StopIteration, StopAsyncIteration, GeneratorExit)
