"""The inspector: what went into each model call, where each part came from and what changed between calls,
as static renderings (text/plain + no-JS HTML, volatile values in metadata `a0`), live widgets and trace exports."""
from __future__ import annotations

from .base import PathStyle, Rendering
from .diff import CallDiff, diff_calls
from .export import export_trace
from .live import LiveTurn
from .throttle import Throttle
from .plugin_ui import ConfigForm, render_footer, render_plugin_config, render_plugins
from .panels import (render_diagnostics, render_extensions, render_extras, render_history, render_paths,
                     render_prompt, render_skills, render_tools)
from .svg import composition_chart, history_chart
from .views import render_call, render_diff, render_turn

__all__ = [
    "Rendering", "PathStyle", "CallDiff", "diff_calls", "render_turn", "render_call", "render_diff", "render_prompt",
    "render_extras", "render_history", "render_skills", "render_tools", "render_extensions", "render_paths",
    "render_diagnostics", "render_footer", "render_plugins", "render_plugin_config", "ConfigForm", "export_trace", "composition_chart", "history_chart", "LiveTurn", "Throttle",
]
