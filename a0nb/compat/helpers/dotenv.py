"""Agent Zero's `helpers.dotenv`: values from the environment, then the notebook folder's `.env`."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

KEY_AUTH_LOGIN = "AUTH_LOGIN"
KEY_AUTH_PASSWORD = "AUTH_PASSWORD"
KEY_RFC_PASSWORD = "RFC_PASSWORD"
KEY_ROOT_PASSWORD = "ROOT_PASSWORD"


def _dotenv_file() -> Path:
    from a0nb.compat.helpers.settings import get_settings
    return Path(get_settings()["workdir_path"]) / ".env"


def get_dotenv_value(key: str, default: Any = None) -> Any:
    if key in os.environ:
        return os.environ[key]
    path = _dotenv_file()
    if path.is_file():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            name, sep, value = line.partition("=")
            if sep and name.strip().removeprefix("export ").strip() == key:
                return value.strip().strip("'\"")
    return default


def load_dotenv() -> None:
    return None  # a0nb reads `.env` where it is needed (secrets, provider keys); nothing is copied into os.environ
