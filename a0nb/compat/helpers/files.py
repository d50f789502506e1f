"""Agent Zero's `helpers.files`: paths relative to the base folder (a0nb: `$A0NB_HOME`), file reading and
writing, and the `VariablesPlugin` base of prompt variables loaders (a0nb's own)."""
from __future__ import annotations

import glob
import os
import re
import shutil
from pathlib import Path
from typing import Any

from a0nb.ext import VariablesPlugin, user_home

AGENTS_DIR = "agents"
PLUGINS_DIR = "plugins"
EXTENSIONS_DIR = "extensions"
USER_DIR = "usr"
PROMPTS_DIR = "prompts"

__all__ = ["VariablesPlugin", "get_base_dir", "get_abs_path", "read_file", "write_file", "exists"]


def get_base_dir() -> str:
    return str(user_home())


def get_abs_path(*relative_paths: str) -> str:
    """An absolute path under the base folder (absolute parts are kept as they are)."""
    return os.path.join(get_base_dir(), *[str(p) for p in relative_paths])


def get_abs_path_development(*relative_paths: str) -> str:
    return get_abs_path(*relative_paths)


def normalize_a0_path(path: str) -> str:
    return path


def fix_dev_path(path: str) -> str:
    return path


def deabsolute_path(path: str) -> str:
    base = get_base_dir()
    return os.path.relpath(path, base) if os.path.isabs(path) and path.startswith(base) else path


def exists(*relative_paths: str) -> bool:
    return os.path.exists(get_abs_path(*relative_paths))


def read_file(relative_path: str, encoding: str = "utf-8") -> str:
    with open(get_abs_path(relative_path), encoding=encoding) as f:
        return f.read()


def read_file_bin(relative_path: str) -> bytes:
    with open(get_abs_path(relative_path), "rb") as f:
        return f.read()


def write_file(relative_path: str, content: str, encoding: str = "utf-8") -> None:
    path = get_abs_path(relative_path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding=encoding) as f:
        f.write(content)


def delete_file(relative_path: str) -> None:
    path = get_abs_path(relative_path)
    if os.path.isfile(path):
        os.remove(path)


def create_dir(relative_path: str) -> None:
    os.makedirs(get_abs_path(relative_path), exist_ok=True)


make_dirs = create_dir


def delete_dir(relative_path: str) -> None:
    shutil.rmtree(get_abs_path(relative_path), ignore_errors=True)


def list_files(relative_path: str, filter: str = "*") -> list[str]:
    folder = get_abs_path(relative_path)
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(folder, filter)))


def find_existing_paths_by_pattern(pattern: str) -> list[str]:
    return sorted(glob.glob(pattern, recursive=True))


def basename(path: str, suffix: str | None = None) -> str:
    name = os.path.basename(path)
    return name[: -len(suffix)] if suffix and name.endswith(suffix) else name


def dirname(path: str) -> str:
    return os.path.dirname(path)


def is_full_json_template(text: str) -> bool:
    stripped = text.strip()
    return bool(re.fullmatch(r"```json\s*\n.*\n```", stripped, re.S))


def remove_code_fences(text: str) -> str:
    return re.sub(r"~~~\w*\n|```\w*\n|~~~|```", "", text)


def safe_file_name(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9._-]", "_", name)


def get_data_path(*parts: Any) -> Path:
    return Path(get_abs_path(*[str(p) for p in parts]))
