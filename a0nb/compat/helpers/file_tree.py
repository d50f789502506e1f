"""Agent Zero's `helpers.file_tree`: a folder's tree as text (a0nb's file_tree)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from a0nb.ext import file_tree as _file_tree

OUTPUT_MODE_STRING = "string"
OUTPUT_MODE_FLAT = "flat"
OUTPUT_MODE_NESTED = "nested"


def file_tree(relative_path: str, *, max_depth: int = 0, max_lines: int = 0, max_folders: int = 0,
              max_files: int = 0, folders_first: bool = True, ignore: str | None = None,
              output_mode: str = OUTPUT_MODE_STRING, **kwargs: Any) -> Any:
    from a0nb.compat.helpers import files
    root = Path(files.get_abs_path(relative_path))
    limits = {k: v for k, v in (("max_depth", max_depth), ("max_lines", max_lines), ("max_folders", max_folders),
                                ("max_files", max_files)) if v}
    return _file_tree(root, ignore=ignore or "", **limits)
