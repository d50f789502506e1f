"""Atomic file writes for everything a0nb saves (exports, cassettes, plugin switches and config, the
trusted-folders list): the text goes to a temporary file beside the target, then replaces it in one
rename, so a full disk or a killed kernel leaves the old file whole and no `.tmp` behind. An OS error
becomes a `StorageError` naming the file, the reason and the fix."""
from __future__ import annotations

import os
from pathlib import Path

from a0nb.errors import A0Error


class StorageError(A0Error):
    """A file a0nb writes could not be written (disk full, permissions, a file too large)."""


def storage_error(path: Path | str, exc: OSError, what: str = "file") -> StorageError:
    reason = exc.strerror or type(exc).__name__
    return StorageError(f"could not write the {what} {path}: {reason} — nothing was changed there; "
                        "free disk space or choose a writable folder, then try again")


def write_text(path: Path | str, text: str, what: str = "file") -> Path:
    """Write `text` to `path` atomically (UTF-8); StorageError on an OS error, with no temporary file left."""
    return write_bytes(path, text.encode("utf-8"), what)


def write_bytes(path: Path | str, data: bytes, what: str = "file") -> Path:
    """Write `data` to `path` atomically; StorageError on an OS error, with no temporary file left."""
    import tempfile  # on first write: `import a0nb` and `%load_ext` stay lean
    path = Path(path)
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise storage_error(path, exc, what) from exc
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return path


__all__ = ["StorageError", "storage_error", "write_bytes", "write_text"]
