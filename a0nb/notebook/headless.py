"""Running a notebook without a browser (`a0nb run`, `a0nb demo`): nbclient with a kernel that talks over
Unix sockets in a private folder instead of TCP ports on 127.0.0.1. Loopback ports are open to every local
user, and ipykernel warns on stderr that their traffic (the notebook's code and outputs) is plain text; a
socket in a folder only this user can enter is neither. Where Unix sockets do not exist (Windows) the kernel
uses TCP, as Jupyter does."""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

__all__ = ["notebook_client"]


@contextlib.contextmanager
def notebook_client(nb: Any, *, kernel_name: str, timeout: float, folder: Path, **options: Any) -> Iterator[Any]:
    """An nbclient NotebookClient for `nb`, its kernel started in `folder` (as the notebook's own folder) and
    its sockets in a private temporary folder, removed with its files when the block ends."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="a0nb-kernel-") as sockets:  # (mode 0700: this user's only)
        transport = {"transport": "ipc", "ip": os.path.join(sockets, "k")} if os.name == "posix" else {}
        km = KernelManager(kernel_name=kernel_name, **transport)
        yield NotebookClient(nb, km=km, timeout=timeout, kernel_name=kernel_name,
                             resources={"metadata": {"path": str(folder)}}, **options)
