"""Agent Zero's `helpers.tokens`: token counts (a0nb's encoder) and upstream's approximation."""
from __future__ import annotations

import math

APPROX_BUFFER = 1.1


def count_tokens(text: str, encoding_name: str = "cl100k_base") -> int:
    if not text:
        return 0
    from a0nb.compat.agent import current
    agent = current()
    if agent is not None:
        return int(agent._engine.shared.counter.count(text))
    return math.ceil(len(text) / 4)


def approximate_tokens(text: str) -> int:
    return int(count_tokens(text) * APPROX_BUFFER)


def trim_to_tokens(text: str, max_tokens: int, direction: str = "end", ellipsis: str = "...") -> str:
    chars = max_tokens * 4
    if len(text) <= chars:
        return text
    return text[:chars] + ellipsis if direction == "end" else ellipsis + text[-chars:]
