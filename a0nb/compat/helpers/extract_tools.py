"""Agent Zero's `helpers.extract_tools`: tool requests in model replies (a0nb's parser) and class loading."""
from __future__ import annotations

import importlib.util
import inspect
from typing import Any

from a0nb.ext import first_closed_object, parse_dirty, source_spec


def extract_json_root_string(content: str) -> str | None:
    """The first complete top-level JSON object in `content` (None while it is still open, or for an array)."""
    return first_closed_object(content)


def json_parse_dirty(text: str) -> dict[str, Any] | None:
    if not text or "{" not in text:
        return None
    value = parse_dirty(text[text.find("{"):])
    return value if isinstance(value, dict) else None


def load_classes_from_file(file: str, cls: type, one_per_file: bool = True) -> list[type]:
    spec = source_spec(f"_a0_compat_{abs(hash(file))}", file)  # from its text, as a0nb loads every user file
    if spec is None or spec.loader is None:
        return []
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = [c for _, c in inspect.getmembers(module, inspect.isclass)
             if issubclass(c, cls) and c is not cls and c.__module__ == module.__name__]
    return found[-1:] if one_per_file and found else found
