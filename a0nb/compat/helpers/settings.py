"""Agent Zero's `helpers.settings`: `get_settings()` as a dict with upstream's keys, filled from the current
a0nb agent (its notebook folder is the work folder) and upstream's defaults for what a notebook lacks."""
from __future__ import annotations

import os
from typing import Any


def _workdir() -> str:
    from a0nb.compat.agent import current
    agent = current()
    return str(agent._engine.workdir) if agent is not None else os.getcwd()


def get_settings() -> dict[str, Any]:
    return {
        "variables": "",
        "workdir_path": _workdir(),
        # a0nb puts the notebook folder's tree into the prompt through its own extension; upstream's copy
        # of that extension reads these (off by default, so the tree is not sent twice)
        "workdir_show": False, "workdir_max_depth": 5, "workdir_max_files": 20, "workdir_max_folders": 20,
        "workdir_max_lines": 250, "workdir_gitignore": "",
        "update_check_enabled": False,
        "mcp_servers": '{"mcpServers": {}}',
        "agent_profile": "default",
    }


def set_settings(settings: dict[str, Any], apply: bool = True) -> None:
    raise NotImplementedError("a0nb settings are set with %config A0.*, A0NB_* variables or agent.configure()")
