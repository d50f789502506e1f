"""Agent Zero's `helpers.subagents`: the folders an agent searches, highest priority first (a0nb's roots)."""
from __future__ import annotations

import os
from typing import Any


def get_paths(agent: Any, *subpaths: str, must_exist_completely: bool = True, include_project: bool = True,
              include_user: bool = True, include_default: bool = True, include_plugins: bool = True,
              default_root: str = "", **kwargs: Any) -> list[str]:
    engine = getattr(agent, "_engine", agent)
    if engine is None:
        return []
    out = []
    for root in engine.hierarchy.roots:
        kind = root.kind
        if (not include_user and kind.startswith("user")) or (not include_default and kind.startswith("bundled")) \
                or (not include_plugins and kind.startswith("plugin")) or (not include_project and kind.startswith("project")):
            continue
        path = os.path.join(str(root.path), *subpaths)
        if not must_exist_completely or os.path.exists(path):
            out.append(path)
    return out
