"""Interrupt soak through jupyter_client: N interrupts (A0NB_SOAK_COUNT, default 8) at seeded random points of
running turns — model streaming, python and terminal tools, compaction — each stopping within 1 s."""
from __future__ import annotations

import os
import random
import statistics
from pathlib import Path
from typing import Iterator

import pytest

from a0nb.testing import answer, tool_reply
from kernel_harness import AgentZeroKernel, texts

COUNT = int(os.environ.get("A0NB_SOAK_COUNT", "8"))
SEED = int(os.environ.get("A0NB_SOAK_SEED", "20260131"))
KINDS = ("stream", "python", "terminal", "compaction")
LIMIT_S = 1.0

# a utility model that streams a summary slowly and marks that compaction is under way
SLOW_UTILITY = '''
import asyncio
from pathlib import Path
from a0nb.providers.base import ModelReply, new_partial


class SlowUtility:
    prefix = "slowutil"
    name = "slowutil"
    has_reasoning_channel = False

    def __init__(self, rest, workdir):
        self.workdir = Path(workdir)

    def init(self, config):
        return {"partial": new_partial()}

    def initialize_request(self, messages, state):
        return messages, state

    async def stream(self, messages, state):
        (self.workdir / "compaction.marker").write_text("1")
        for i in range(150):
            yield "summary "
            await asyncio.sleep(0.2)

    def process_chunk(self, chunk, state):
        state["partial"]["content"].append(chunk)
        return "", chunk

    def finalize(self, state):
        return ModelReply(content="".join(state["partial"]["content"]), model="slowutil")
'''


class Kernel(AgentZeroKernel):
    """The shared harness with a slow utility model for the compaction case."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, providers={"slowutil.py": SLOW_UTILITY})


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    k = Kernel(tmp_path_factory.mktemp("a0soak"))
    try:
        yield k
    finally:
        k.close()


def _setup(kernel: Kernel, kind: str, i: int) -> tuple[str, Path]:
    """Configure the kernel's agent for one interrupt of `kind`; the cell to run and the marker to wait for."""
    nb = kernel.nb
    small = kind == "compaction"
    kernel.execute(f"%config A0.ctx_length = {3000 if small else 128000}")
    kernel.execute("%a0 utility slowutil:" if small else "%config A0.utility_model = None")
    if kind == "stream":
        kernel.execute("%a0 model slow:")
        return f"%a0 ask stream slowly {i}", nb / "streaming.marker"
    marker = nb / f"{kind}.marker"
    if kind == "python":
        code = f"import time; open({str(marker)!r}, 'w').close(); time.sleep(30)"
        replies = [tool_reply("code_execution", runtime="python", code=code)]
    elif kind == "terminal":
        replies = [tool_reply("code_execution", runtime="terminal", code=f"touch '{marker}' && sleep 30")]
    else:  # medium outputs (none large enough to be truncated) push the topic over the small budget, so a
        # prompt soon compacts it by attention, which asks the utility model for a summary
        replies = [tool_reply("code_execution", runtime="python", code=f"print('filler words {n} ' * 100)")
                   for n in range(12)]
    kernel.execute(f"%a0 model {kernel.script(*replies, answer('not reached'))}")
    return f"%a0 ask {kind} work {i}", marker


def test_interrupt_soak(kernel: Kernel) -> None:
    rng = random.Random(SEED)
    plan = [KINDS[i % len(KINDS)] for i in range(COUNT)]  # every kind at least once when COUNT >= 4
    rng.shuffle(plan)
    figures: list[tuple[str, float, bool]] = []
    for i, kind in enumerate(plan):
        cell, marker = _setup(kernel, kind, i)
        elapsed, reply, outputs = kernel.interrupt_at(cell, marker, rng.uniform(0.0, 0.3))
        out = texts(outputs)
        clean = reply["status"] == "ok" and "TurnInterrupted" in out and elapsed < LIMIT_S
        figures.append((kind, elapsed, clean))
        assert reply["status"] == "ok", f"interrupt {i} ({kind}): {reply}"
        assert "TurnInterrupted" in out, f"interrupt {i} ({kind}) did not stop the turn cleanly: {out[-500:]}"

    ms = [e * 1000 for _, e, _ in figures]
    for kind in KINDS:
        own = [e * 1000 for k, e, _ in figures if k == kind]
        if own:
            print(f"\n  {kind:<10} {len(own):>3} interrupts, median {statistics.median(own):.1f} ms, "
                  f"max {max(own):.1f} ms", end="")
    clean = sum(c for _, _, c in figures)
    print(f"\ninterrupts: {len(figures)} sent, {clean} clean stops, median {statistics.median(ms):.1f} ms, "
          f"max {max(ms):.1f} ms")
    slow = [(k, round(e, 3)) for k, e, _ in figures if e >= LIMIT_S]
    assert not slow, f"interrupts slower than {LIMIT_S} s: {slow}"

    kernel.execute("%config A0.ctx_length = 128000")
    kernel.execute("%config A0.utility_model = None")
    kernel.execute(f"%a0 model {kernel.script(answer('back to normal after the soak'))}")
    reply, out = kernel.execute("%a0 ask and now?")
    assert reply["status"] == "ok" and "back to normal after the soak" in texts(out)
    assert kernel.history_problems() == "[]"
