"""Where the bundled defaults live: `a0nb/_bundled/` in a wheel, the repository root in a checkout."""
from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def bundled_root() -> Path:
    """The folder holding the bundled `prompts/ agents/ plugins/ tools/ extensions/ skills/ kernel/`."""
    inside = PACKAGE_DIR / "_bundled"
    return inside if inside.is_dir() else PACKAGE_DIR.parent


def user_home() -> Path:
    """`$A0NB_HOME`, default `~/.a0nb`."""
    return Path(os.environ.get("A0NB_HOME") or Path.home() / ".a0nb").expanduser()
