"""Agent Zero's module names (`helpers.*`, `python.helpers.*`, `agent`, `initialize`, `models`) mapped onto
a0nb. Files a0nb loads see them through per-module import redirection (a0nb.files.imports); importing this
package also makes them importable for the rest of the process, as a last resort after every real module
on sys.path (a user's own `helpers` or `agent` still wins), so Agent Zero code and tests run outside a
loaded folder (`python -m pytest -p a0nb.compat`)."""
from __future__ import annotations

from a0nb.compat.names import install

install()

__all__ = ["install"]
