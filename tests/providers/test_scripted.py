"""The scripted model's `delay`: seconds between streamed chunks, so a demo or a browser test can watch the
reply arrive; a bad value is a clear error naming the reply."""
from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from a0nb.errors import ConfigError
from a0nb.providers.scripted import CHUNK, ScriptedProvider, load_script


def test_delay_spaces_the_chunks() -> None:
    provider = ScriptedProvider([{"content": "x" * (CHUNK * 5), "delay": 0.02}, "fast"])

    async def arrivals(state: dict) -> list[float]:
        out = []
        async for _ in provider.stream([], state):
            out.append(time.perf_counter())
        return out
    times = asyncio.run(arrivals({}))
    assert len(times) == 5 and times[-1] - times[0] >= 0.06
    fast = asyncio.run(arrivals({}))
    assert fast[-1] - fast[0] < 0.02


def test_a_bad_delay_names_the_reply(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text("- content: hi\n  delay: soon\n")
    with pytest.raises(ConfigError, match="reply 1 .* delay must be a number"):
        load_script("r.yaml", tmp_path)


def test_common_prefix_finds_the_first_difference_anywhere() -> None:
    """The tail-first search (one comparison up to a little before the end, then item by item, else by halves)
    gives what a plain scan gives, for lists and tuples, equal-but-new items and differences anywhere."""
    import random

    from a0nb.providers.base import common_prefix

    def scan(a: list[str], b: list[str]) -> int:
        i = 0
        while i < min(len(a), len(b)) and a[i] == b[i]:
            i += 1
        return i

    rnd = random.Random(23)
    for _ in range(3000):
        old = [f"m{rnd.randint(0, 3)}" for _ in range(rnd.randint(0, 60))]
        new = old[:rnd.randint(0, len(old))] + [f"m{rnd.randint(0, 3)}" for _ in range(rnd.randint(0, 20))]
        if new and rnd.random() < 0.4:
            new[rnd.randrange(len(new))] = "changed"
        if rnd.random() < 0.3:
            new = ["".join(list(text)) for text in new]  # equal texts, new objects
        assert common_prefix(old, new) == common_prefix(tuple(old), new) == scan(old, new)
