"""What Crystal Lattice features do to text: `apply_completion` expands accepted completions in a user message
before it is sent, `get_template(config)` contributes a system-prompt section (with the feature as its source)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from a0nb.files.contracts import overrides
from a0nb.files.feature_plugin import FeaturePlugin
from a0nb.files.features import features

MAX_SCAN = 20_000  # longer messages are sent as typed (each position asks every feature once)


@dataclass(frozen=True)
class FeatureSource:
    """The provenance of a template section, shaped like a prompt file's (`name`, `label`, `overrode`)."""

    name: str
    label: str
    path: Path | None = None
    overrode: tuple[Path, ...] = ()


@dataclass(frozen=True)
class TemplateText:
    text: str
    sources: tuple[FeatureSource, ...]


def _lattice(features: Sequence[Any], method: str) -> list[Any]:
    return [f for f in features if isinstance(f.instance, FeaturePlugin) and overrides(type(f.instance), FeaturePlugin, method)]


def expand_completions(features: Sequence[Any], text: str) -> tuple[str, list[dict[str, Any]]]:
    """Find each completion a feature offers whose `replacement` is in the message where it would have been
    inserted, and replace it by the feature's `apply_completion` snippet (first non-empty wins). Returns the
    new text and what was expanded (feature, replacement, snippet, start) for the inspector."""
    active = [f for f in _lattice(features, "apply_completion") if f in _lattice(features, "get_completions")]
    if not active or len(text) > MAX_SCAN:
        return text, []
    done: list[dict[str, Any]] = []
    pos = 1
    while pos <= len(text):
        hit = _hit(active, text, pos)
        if hit is None:
            pos += 1
            continue
        feature, completion, start, end, snippet = hit
        done.append({"feature": feature.name, "path": str(feature.path), "replacement": text[start:end],
                     "snippet": snippet, "start": start})
        text = text[:start] + snippet + text[end:]
        pos = start + len(snippet) + 1
    return text, done


def _hit(features: Sequence[Any], text: str, pos: int) -> tuple[Any, dict[str, Any], int, int, str] | None:
    head = text[:pos]
    for feature in features:
        config = dict(feature.config)
        for completion in feature.instance.get_completions(config, head) or ():
            if not isinstance(completion, dict):
                continue
            replacement, start = str(completion.get("replacement", "")), completion.get("start")
            if not replacement or not isinstance(start, int) or not text.startswith(replacement, start):
                continue
            end = start + len(replacement)
            snippet = feature.instance.apply_completion(config, text[:end], completion)
            if snippet:
                return feature, completion, start, end, str(snippet)
    return None


def template_features(agent: Any) -> list[Any]:
    """The features that define `get_template` (discovered and registered ones)."""
    registry = getattr(getattr(agent, "shared", None), "lattice", None)
    if registry is None or not registry.features:  # discovered features only: their filter is kept with them
        return agent.hierarchy.memo(("features", "get_template"),  # type: ignore[no-any-return]
                                    lambda: _lattice(features(agent), "get_template"))
    return _lattice(features(agent), "get_template")


def feature_templates(agent: Any) -> list[TemplateText]:
    """Each feature's non-empty `get_template(config)`, as a section whose source is the feature."""
    out: list[TemplateText] = []
    for feature in template_features(agent):
        text = feature.instance.get_template(dict(feature.config))
        if text:
            source = FeatureSource(f"{feature.name}.get_template", feature.root_label, feature.path)
            out.append(TemplateText(str(text), (source,)))
    return out


__all__ = ["expand_completions", "feature_templates", "template_features", "TemplateText", "FeatureSource"]
