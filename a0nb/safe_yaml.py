"""The one YAML loader of a0nb (skills, plugins, profiles, settings, cassettes, scripted replies): YAML's
safe subset with limits, so a file from an untrusted folder cannot hang or exhaust the kernel.

- size: at most `max_bytes` of text (default 32 MB);
- aliases: a document whose aliases expand past `max_nodes` nodes (a "billion laughs" bomb: a few lines
  that expand to billions of nodes once anything walks the result) is refused while it is composed.

A document without anchors (no `&name`) has no aliases to expand and is loaded by libyaml's C loader when
present; only documents with anchors take the counting (pure-Python) composer. Errors are `yaml.YAMLError`
subclasses, so every caller's existing message for invalid YAML names the file."""
from __future__ import annotations

import re
from typing import Any

import yaml

MAX_BYTES = 32 * 1024 * 1024
MAX_NODES = 200_000
_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s,\[\]{}]+")
_FAST = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YAMLLimitError(yaml.YAMLError):
    """A YAML document over a0nb's size or alias-expansion limit."""


class _CountingLoader(yaml.SafeLoader):
    """SafeLoader that knows how many nodes each composed node stands for, aliases expanded."""

    max_nodes = MAX_NODES

    def compose_node(self, parent: Any, index: Any) -> Any:
        node = super().compose_node(parent, index)
        weight = getattr(node, "_a0nb_weight", None)
        if weight is None:
            weight = 1
            if isinstance(node, yaml.SequenceNode):
                weight += sum(getattr(child, "_a0nb_weight", 1) for child in node.value)
            elif isinstance(node, yaml.MappingNode):
                weight += sum(getattr(k, "_a0nb_weight", 1) + getattr(v, "_a0nb_weight", 1) for k, v in node.value)
            setattr(node, "_a0nb_weight", weight)
        if weight > self.max_nodes:
            mark = getattr(node, "start_mark", None)
            raise YAMLLimitError(f"the YAML expands to more than {self.max_nodes:,} values through its aliases "
                                 f"(`*name` repeating `&name`){f' near line {mark.line + 1}' if mark else ''}; "
                                 "a0nb refuses it (write the values out, or use fewer aliases)")
        return node


def load(text: str | bytes, *, max_bytes: int = MAX_BYTES, max_nodes: int = MAX_NODES) -> Any:
    """`yaml.safe_load(text)` within a0nb's limits (YAMLLimitError beyond them)."""
    if len(text) > max_bytes:
        raise YAMLLimitError(f"the YAML is {len(text):,} bytes, over a0nb's limit of {max_bytes:,}")
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if "&" not in text or not _ANCHOR.search(text):
        return yaml.load(text, Loader=_FAST)  # noqa: S506 - a safe loader; no anchors, so no aliases
    loader = _CountingLoader(text)
    loader.max_nodes = max_nodes
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


__all__ = ["YAMLLimitError", "load", "MAX_BYTES", "MAX_NODES"]
