"""Plugins' UI elements as the notebook shows them: the footer and status lines under an answer, the plugin
list of `%a0 plugins`, and a plugin's config as a static table or a live ipywidgets form that saves it."""
from __future__ import annotations

from typing import Any, Callable

from a0nb.inspector.ui_elements import UIElement, coerce_config_value, config_fields, footer_line, status_line, ui_elements
from a0nb.inspector import html as h
from a0nb.inspector.base import PathStyle, Rendering


def render_footer(agent: Any, turn: Any, elapsed: float | None = None) -> Rendering | None:
    """Every `message_footer` and `status_bar` line for this turn; None when no enabled plugin declares one.
    `elapsed`: the turn's wall time, tools included (the footer's latency)."""
    replayed = agent.model_spec("chat").startswith("replay:")
    footers = [footer_line(e, turn, elapsed, replayed) for e in ui_elements(agent, "message_footer")]
    statuses = [status_line(e, agent) for e in ui_elements(agent, "status_bar")]
    lines = [x for x in footers + statuses if x]
    if not lines:
        return None
    body = "".join(f'<div class="a0-footer" style="{h.FONT};font-size:12px;color:{h.MUTED}">{h.esc(x)}</div>'
                   for x in footers if x)
    body += "".join(f'<div class="a0-status" style="{h.FONT};font-size:12px;color:{h.MUTED};border-top:1px solid '
                    f'#d1d9e0;margin-top:2px;padding-top:2px">{h.badge("a0", "assistant")}{h.esc(x)}</div>'
                    for x in statuses if x)
    html = f'<div class="a0-ui" style="max-width:1100px;margin:0 0 6px 2px;background:{h.PAPER}">{body}</div>'
    return Rendering("\n".join(lines), html, {"footer": footers, "status": statuses})


def render_plugins(agent: Any) -> Rendering:
    """Every plugin found: on or off here, where it lives, what it offers."""
    from a0nb.files.plugins import is_enabled
    hierarchy, style = agent.hierarchy, PathStyle.for_agent(agent)
    offers = _offers(agent)
    lines = [f"Plugins: {len(hierarchy.plugins)}"]
    rows = []
    for p in hierarchy.plugins:
        on = is_enabled(p, hierarchy.workdir, hierarchy.home, hierarchy.profile)
        ui = ", ".join(offers.get(p.name, ())) or "—"
        lines.append(f"  {p.name}: {'on' if on else 'off'} ({p.source}) {p.title}" + (f" [ui: {ui}]" if ui != "—" else ""))
        rows.append((h.code(p.name), h.badge("on", "ok") if on else h.muted("off"), h.esc(p.source)
                     + f"<br>{h.muted(style(p.path))}", h.esc(p.title) + (f"<br>{h.muted(p.description)}"
                                                                              if p.description else ""), h.esc(ui)))
    body = h.table(["plugin", "", "from", "what it does", "UI"], rows, ("150px", "40px", "", "", "")) + h.note(
        "%a0 plugins enable NAME / disable NAME switch one for this notebook (--scope user: for every notebook); "
        "%a0 plugins config NAME shows or sets its config.")
    return Rendering("\n".join(lines), h.root(body, "Plugins"), {})


def _offers(agent: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in ui_elements(agent):
        if e.plugin is not None and e.kind not in out.setdefault(e.plugin, []):
            out[e.plugin].append(e.kind)
    return out


def render_plugin_config(agent: Any, name: str, config: dict[str, Any], element: UIElement | None) -> Rendering:
    """The config as a table (what the saved notebook and nbval see), with the command that changes it."""
    fields = config_fields(element, config)
    lines = [f"{name} config:"] + [f"  {f.name} = {_show(f.value)}" for f in fields]
    rows = [(h.code(f.name), h.esc(f.type) + (f"<br>{h.muted(', '.join(map(str, f.choices)))}" if f.choices else ""),
             h.code(_show(f.value)), h.muted(f.help) if f.help else "") for f in fields]
    body = h.table(["field", "type", "value", ""], rows, ("150px", "160px", "", "")) + h.note(
        f"Change it with %a0 plugins config {name} key=value (lists: a,b,c); it is saved in "
        f".a0proj/plugins/{name}/config.json next to the notebook.")
    return Rendering("\n".join(lines), h.root(body, f"Plugin config: {name}"), {})


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return str(value)


class ConfigForm:
    """The `config` element as ipywidgets: one input per field, Save writes the plugin's notebook-scoped
    config.json through `save` (bad values are reported in the form, nothing is written)."""

    def __init__(self, name: str, element: UIElement | None, config: dict[str, Any],
                 save: Callable[[dict[str, Any]], str]) -> None:
        import ipywidgets as w
        self.name, self.save = name, save
        self.fields = config_fields(element, config)
        self.inputs = {f.name: self._input(w, f) for f in self.fields}
        self.button = w.Button(description="Save", button_style="primary")
        self.message = w.HTML()
        self.button.on_click(lambda _b: self.submit())
        self.view = w.VBox([w.HTML(f"<b>{h.esc(name)}</b> config"), *self.inputs.values(),
                            w.HBox([self.button, self.message])])

    @staticmethod
    def _input(w: Any, f: Any) -> Any:
        style = {"description_width": "140px"}
        if f.type == "boolean":
            return w.Checkbox(value=bool(f.value), description=f.label, style=style)
        if f.type == "integer":
            return w.IntText(value=int(f.value or 0), description=f.label, style=style)
        if f.type == "number":
            return w.FloatText(value=float(f.value or 0), description=f.label, style=style)
        if f.type == "choice" and f.choices:
            return w.Dropdown(options=list(f.choices), value=f.value if f.value in f.choices else f.choices[0],
                              description=f.label, style=style)
        if f.type == "list" and f.choices:
            chosen = tuple(v for v in (f.value or ()) if v in f.choices)
            return w.SelectMultiple(options=list(f.choices), value=chosen, description=f.label, style=style,
                                    rows=min(6, len(f.choices)))
        return w.Text(value=_show(f.value if f.value is not None else ""), description=f.label, style=style)

    def values(self) -> dict[str, Any]:
        out = {}
        for f in self.fields:
            raw = self.inputs[f.name].value
            out[f.name] = coerce_config_value(f, list(raw) if isinstance(raw, tuple) else raw)
        return out

    def submit(self) -> None:
        try:
            where = self.save(self.values())
        except ValueError as exc:
            self.message.value = f'<span style="color:#b00020">{h.esc(exc)}</span>'
            return
        self.message.value = h.muted(f"saved to {where}")
