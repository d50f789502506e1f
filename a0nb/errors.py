"""The three homes of errors: for the model (repairable), for the user (A0Error and kin), and
control flow (TurnInterrupted). Bugs are not caught here; they propagate."""
from __future__ import annotations


class A0Error(Exception):
    """A problem the user can fix; the message says how (which file, which setting, which env var)."""


class ConfigError(A0Error):
    """A bad setting, profile, model spec or file."""


class PromptError(A0Error):
    """A prompt file could not be rendered (include cycle, unreadable file)."""


class ExtensionError(A0Error):
    """An extension raised; the message names its file (`path`, None for a registered function), the point, and
    `line`, the file's line the error came from when its traceback shows it."""

    path: str | None = None
    point = ""
    line: int | None = None


class ModelError(A0Error):
    """A model call failed after retries; names the provider and, for auth, the env var to set."""


class TurnError(A0Error):
    """A turn ended without an answer (circuit breaker, max iterations, a failing extension)."""


class TurnInterrupted(A0Error):
    """The user interrupted a running turn; history was left consistent."""


class CodeTimeout(BaseException):
    """Stops agent code at its time limit. Like KeyboardInterrupt it derives from BaseException, so the
    code's own `except Exception` cannot swallow it (the one BaseException subclass of a0nb)."""


class RepairableError(Exception):
    """An error the model can fix: it is added to history as a warning and the loop goes on."""


class Misformat(RepairableError):
    """The model's reply held no valid tool request."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


def error_line(exc: BaseException, path: object) -> int | None:
    """The line of the file `path` that `exc` came from: a syntax error's own line, else the innermost frame of
    its traceback in that file (None when the traceback never enters it)."""
    import traceback
    from pathlib import Path
    if isinstance(exc, SyntaxError) and exc.lineno:
        return exc.lineno
    wanted = Path(path)  # type: ignore[arg-type]
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if Path(frame.filename) == wanted:
            return frame.lineno
    return None
