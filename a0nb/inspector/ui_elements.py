"""Plugin UI (ARCHITECTURE §6, Crystal Lattice `get_ui_elements`): feature classes declare elements —
`message_footer` (a line under each answer), `status_bar` (the agent's state in one line), `config` (a form
for the plugin's scoped config.json) — and this module collects them and computes their lines and fields."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from a0nb.files.features import FOOTER_FIELDS, STATUS_FIELDS, Feature, features

__all__ = ["UIElement", "ConfigField", "ui_elements", "footer_line", "status_line", "config_fields",
           "FOOTER_FIELDS", "STATUS_FIELDS", "coerce_config_value"]

KINDS = ("config", "message_footer", "status_bar")
FIELD_TYPES = ("string", "integer", "number", "boolean", "choice", "list")


@dataclass(frozen=True)
class UIElement:
    kind: str                        # config | message_footer | status_bar
    plugin: str | None               # the plugin that declared it (None: a features/ folder outside plugins)
    feature: str                     # the feature class
    path: Path
    spec: Mapping[str, Any] = field(default_factory=dict)

    @property
    def fields(self) -> list[str]:
        known = FOOTER_FIELDS if self.kind == "message_footer" else STATUS_FIELDS
        names = self.spec.get("fields") or known
        return [str(n) for n in names if str(n) in known]


@dataclass(frozen=True)
class ConfigField:
    name: str
    type: str
    label: str
    value: Any
    choices: tuple[Any, ...] = ()
    help: str = ""


def ui_elements(agent: Any, kind: str | None = None) -> list[UIElement]:
    """Every element the agent's feature classes declare (higher roots first); bad ones go to diagnostics."""
    found: list[UIElement] = []
    tags, models = _tags_and_models(agent)
    for feat in features(agent):
        fn = getattr(feat.instance, "get_ui_elements", None)
        if fn is None:
            continue
        try:
            declared = list(fn(dict(feat.config), tags, models) or ())
        except Exception as exc:  # a user's feature class: a diagnostic, never a broken answer cell
            agent.diagnostics.add("error", "feature", f"{feat.name}.get_ui_elements failed: {type(exc).__name__}: "
                                  f"{exc}", feat.path, fix="return a list of dicts with a `type` key")
            continue
        for spec in declared:
            element = _element(agent, feat, spec)
            if element is not None and (kind is None or element.kind == kind):
                found.append(element)
    return found


def _element(agent: Any, feat: Feature, spec: Any) -> UIElement | None:
    kind = spec.get("type") if isinstance(spec, Mapping) else None
    if kind not in KINDS:
        agent.diagnostics.add("warning", "feature", f"{feat.name}.get_ui_elements: unknown element {spec!r}",
                              feat.path, fix=f"use a dict with type one of {', '.join(KINDS)}")
        return None
    element = UIElement(kind, feat.plugin, feat.name, feat.path, dict(spec))
    if kind != "config":
        known = FOOTER_FIELDS if kind == "message_footer" else STATUS_FIELDS
        unknown = [n for n in spec.get("fields") or () if str(n) not in known]
        if unknown:
            agent.diagnostics.add("warning", "feature", f"{feat.name}: unknown {kind} fields {unknown}", feat.path,
                                  fix=f"known fields: {', '.join(known)}")
    return element


def _tags_and_models(agent: Any) -> tuple[frozenset[str], dict[str, str]]:
    models = {"chat": agent.model_spec("chat"), "utility": agent.model_spec("utility")}
    try:
        from a0nb.providers.extension import provider_tags
        tags = provider_tags(agent.provider("chat"), agent.model_config("chat"))
    except Exception:  # no model yet, or a bad spec: elements still render, without provider tags
        tags = frozenset()
    return tags, models


# ---------------------------------------------------------------- footer and status lines


def _cached(usage: Mapping[str, Any]) -> int:
    details = usage.get("prompt_tokens_details") or {}
    value = details.get("cached_tokens") if isinstance(details, Mapping) else None
    if value is None:
        value = usage.get("cache_read_input_tokens")
    return int(value or 0)


def _money(value: float | None) -> str:
    return "cost —" if value is None else f"${value:,.4f}"


def footer_values(turn: Any, elapsed: float | None = None, replayed: bool = False) -> dict[str, str]:
    """The footer's fields for a turn. `elapsed` is the turn's wall time (model calls and tools); without it the
    calls' latencies add up. A replayed turn names the model its cassette recorded, marked as replayed."""
    calls = list(turn.calls)
    costs = [c.cost for c in calls if c.cost is not None]
    models = list(dict.fromkeys(c.model for c in calls if c.role == "chat" and c.model))
    return {
        "tokens": f"{sum(int(c.usage.get('total_tokens', 0) or 0) for c in calls):,} tokens",
        "cached_tokens": f"{sum(_cached(c.usage) for c in calls):,} cached",
        "cost": _money(sum(costs) if costs else None),
        "latency": f"{sum(c.latency or 0.0 for c in calls) if elapsed is None else elapsed:.2f} s",
        "model": (", ".join(models) or "no model") + (" (replayed)" if replayed and models else ""),
        "calls": f"{len(calls)} call{'s' if len(calls) != 1 else ''}",
    }


def footer_line(element: UIElement, turn: Any, elapsed: float | None = None, replayed: bool = False) -> str:
    values = footer_values(turn, elapsed, replayed)
    return " · ".join(values[name] for name in element.fields)


def status_values(agent: Any, running_tool: str | None = None) -> dict[str, str]:
    chats = [c for c in agent.calls if c.role == "chat"]
    window = agent.settings.ctx_length
    used = chats[-1].tokens if chats else 0
    costs = [c.cost for c in agent.calls if c.cost is not None]
    window_text = f"{window // 1000}k" if window >= 1000 else str(window)
    return {
        "model": agent.model_spec("chat") or "no model",
        "context": f"context {used / window:.0%} of {window_text}" if window else "context —",
        "tool": f"running {running_tool}" if running_tool else "idle",
        "cost": "session " + _money(sum(costs) if costs else None),
        "turns": f"{len(agent.turns)} turn{'s' if len(agent.turns) != 1 else ''}",
    }


def status_line(element: UIElement, agent: Any, running_tool: str | None = None) -> str:
    values = status_values(agent, running_tool)
    return " · ".join(values[name] for name in element.fields)


# ---------------------------------------------------------------- config forms


def config_fields(element: UIElement | None, config: Mapping[str, Any]) -> list[ConfigField]:
    """The form's fields: declared in the element (`fields: {name: {type, label, choices, help}}`), else (no
    element, or one without fields) one per key of the plugin's config, typed by its current value."""
    declared = element.spec.get("fields") if element is not None else None
    out: list[ConfigField] = []
    if isinstance(declared, Mapping) and declared:
        for name, raw in declared.items():
            spec = raw if isinstance(raw, Mapping) else {"type": str(raw)}
            kind = str(spec.get("type", "string"))
            out.append(ConfigField(str(name), kind if kind in FIELD_TYPES else "string",
                                   str(spec.get("label") or name), config.get(name, spec.get("default")),
                                   tuple(spec.get("choices") or ()), str(spec.get("help") or "")))
        return out
    for name, value in config.items():
        out.append(ConfigField(str(name), _infer(value), str(name), value))
    return out


def _infer(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, (list, tuple)):
        return "list"
    return "string"


def coerce_config_value(f: ConfigField, raw: Any) -> Any:
    """A form or `key=value` input as the field's type; ValueError names the field and what it takes."""
    if f.type == "boolean":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"{f.name} takes true or false, not {raw!r}")
    if f.type == "integer":
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise ValueError(f"{f.name} takes a whole number, not {raw!r}") from None
    if f.type == "number":
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise ValueError(f"{f.name} takes a number, not {raw!r}") from None
    if f.type == "list":
        items: Sequence[Any] = raw if isinstance(raw, (list, tuple)) else [x.strip() for x in str(raw).split(",")]
        items = [x for x in items if str(x).strip()]
        if f.choices:
            bad = [x for x in items if x not in f.choices]
            if bad:
                raise ValueError(f"{f.name}: {', '.join(map(str, bad))} not among {', '.join(map(str, f.choices))}")
        return list(items)
    if f.type == "choice" and f.choices and raw not in f.choices:
        raise ValueError(f"{f.name} takes one of {', '.join(map(str, f.choices))}, not {raw!r}")
    return str(raw)
