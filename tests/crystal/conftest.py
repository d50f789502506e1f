"""Helpers for the Crystal Lattice tests: the seed's examples as modules, OpenAI-shaped stream chunks."""
from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from cl_seed import block, with_ext_import  # noqa: E402


def seed_module(*class_names: str, extra: str = "") -> types.ModuleType:
    """The seed's examples for `class_names`, import line changed to a0nb.ext, executed as one module."""
    header = "from typing import Any, Dict, Iterator, List, Optional, Tuple\nfrom a0nb.ext import ProviderPlugin\n"
    code = header + "\n".join(with_ext_import(block(n)) for n in class_names) + extra
    module = types.ModuleType("seed_examples")
    exec(compile(code, "<seed 004>", "exec"), module.__dict__)
    return module


def chunks(text: str, reasoning: str = "", size: int = 5) -> list[dict[str, Any]]:
    """An OpenAI-shaped stream: reasoning deltas first, then the text in pieces."""
    out = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": "", "reasoning": reasoning[i:i + size]}}]}
           for i in range(0, len(reasoning), size)]
    out += [{"choices": [{"index": 0, "delta": {"content": text[i:i + size]}}]} for i in range(0, len(text), size)]
    return out


@pytest.fixture
def seed_mod() -> Any:
    return seed_module
