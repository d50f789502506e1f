"""The inspector: what went into each model call, where each part came from and what changed between calls,
as static renderings (text/plain + no-JS HTML, volatile values in metadata `a0`), live widgets and trace exports."""
from __future__ import annotations

from a0nb.inspector.base import PathStyle, Rendering
from a0nb.inspector.diff import CallDiff, diff_calls
from a0nb.inspector.export import export_trace
from a0nb.inspector.live import LiveTurn
from a0nb.inspector.throttle import Throttle
from a0nb.inspector.plugin_ui import ConfigForm, render_footer, render_plugin_config, render_plugins
from a0nb.inspector.panels import (render_diagnostics, render_extensions, render_extras, render_history, render_paths,
                     render_prompt, render_skills, render_tools)
from a0nb.inspector.safe_html import sanitize_html
from a0nb.inspector.search import render_search
from a0nb.inspector.svg import composition_chart, history_chart
from a0nb.inspector.views import render_call, render_diff, render_turn
from a0nb.inspector.batch import render_map
from a0nb.engine.batch.result import MapResult
from a0nb.engine.turn import Turn

Turn.display = render_turn  # a turn in a notebook shows through the inspector (the engine cannot import it)
MapResult.display = render_map  # and so does a batch's result

__all__ = [
    "Rendering", "PathStyle", "CallDiff", "diff_calls", "render_turn", "render_call", "render_diff", "render_prompt",
    "render_extras", "render_history", "render_skills", "render_tools", "render_extensions", "render_paths",
    "render_diagnostics", "render_footer", "render_plugins", "render_plugin_config", "ConfigForm", "export_trace", "composition_chart", "history_chart", "LiveTurn", "Throttle",
    "render_search", "sanitize_html", "render_map",
]
