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
