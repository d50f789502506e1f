"""Agent Zero's `helpers.settings`: `get_settings()` as a dict with upstream's keys, filled from the current
a0nb agent (its notebook folder is the work folder) and upstream's defaults for what a notebook lacks."""
from __future__ import annotations

import os
from typing import Any


def _engine() -> Any:
    from a0nb.compat.agent import current_engine
    return current_engine()


def _workdir_settings(engine: Any) -> dict[str, Any]:
    """Upstream's `workdir_*` settings from the notebook's own file-structure settings (`.a0proj`, else a0nb's
    defaults), so upstream's `_75_include_workdir_extras` (which replaces a0nb's of the same name) shows the
    same tree a0nb's would, and none when it is switched off."""
    from a0nb.compat.helpers.projects import file_structure_of
    fs = file_structure_of(engine.project.file_structure) if engine is not None else {"gitignore": ""}
    return {"workdir_show": bool(fs.get("enabled", engine is not None)), "workdir_max_depth": int(fs.get("max_depth", 5)),
            "workdir_max_files": int(fs.get("max_files", 20)), "workdir_max_folders": int(fs.get("max_folders", 20)),
            "workdir_max_lines": int(fs.get("max_lines", 250)),
            "workdir_gitignore": fs["gitignore"]}


def _mcp_servers(engine: Any) -> str:
    """The agent's `mcp_servers` setting as upstream keeps it: one JSON text."""
    import json
    value = engine.settings.mcp_servers if engine is not None else None
    if value is None:
        return '{"mcpServers": {}}'
    return value if isinstance(value, str) else json.dumps(value)


def get_settings() -> dict[str, Any]:
    engine = _engine()
    return {
        "variables": "",
        "workdir_path": str(engine.workdir) if engine is not None else os.getcwd(),
        **_workdir_settings(engine),
        "update_check_enabled": False,
        "mcp_servers": _mcp_servers(engine),
        "agent_profile": str(engine.profile) if engine is not None else "default",
    }


def set_settings(settings: dict[str, Any], apply: bool = True) -> None:
    raise NotImplementedError("a0nb settings are set with %config A0.*, A0NB_* variables or agent.configure()")
