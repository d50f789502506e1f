"""Compaction bookkeeping cost with an instant summariser: 10 / 100 / 1,000 / 10,000 messages of ~200 tokens,
budget scaled so each history is ~2.2x over it (1,000 messages = 200k tokens against the default 89,600).
Target: 1,000 messages <= 50 ms median with warm per-message token caches. Run: python benchmarks/bench_compaction.py"""
from __future__ import annotations

import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from a0nb.engine.compaction import CompactionSettings, compact  # noqa: E402
from a0nb.engine.history import History  # noqa: E402
from a0nb.engine.tokens import TokenCounter, encoder_name  # noqa: E402

REPEATS = 21
WORDS = ("agent tool result file path error test value output request model token budget summary topic "
         "history message notebook kernel cell python function return list dict string number").split()


def text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def build(messages: int, counter: TokenCounter) -> History:
    rng = random.Random(messages)
    h = History(counter=counter)
    kinds = [(False, "user"), (True, "ai"), (False, "tool_result"), (True, "ai"), (False, "tool_result")]
    for i in range(messages):
        ai, kind = kinds[i % 5]
        if i and i % 5 == 0:
            h.new_topic()
        body = text(rng, 177)
        h.add(ai, body if ai else {kind: body}, kind)
    return h


async def instant(system: str, message: str) -> str:
    return "The agent ran the tool, read the output and decided what to do next."


def stats(samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    return f"median {statistics.median(ms):8.2f} ms  min {min(ms):8.2f}  max {max(ms):8.2f}"


def measure(messages: int, warm: bool, loop: asyncio.AbstractEventLoop) -> tuple[list[float], int, int]:
    counter = TokenCounter()
    base = build(messages, counter)
    tokens = base.tokens()
    settings = CompactionSettings(ctx_length=max(1, int(128_000 * messages / 1000)))
    samples, replacements = [], 0
    for _ in range(REPEATS):
        if warm:
            h = base.copy()  # keeps the per-message token caches, as a live history would
        else:
            h = History.from_dict(base.to_dict(), counter=TokenCounter())
        start = time.perf_counter()
        event = loop.run_until_complete(compact(h, settings, instant, h.counter))
        samples.append(time.perf_counter() - start)
        assert event is not None and event.tokens_after <= settings.budget
        replacements = len(event.replacements)
    return samples, tokens, replacements


def main() -> int:
    loop = asyncio.new_event_loop()
    print(f"token counter: {encoder_name()}; {REPEATS} repeats each; instant summariser")
    verdict = 0.0
    for messages in (10, 100, 1_000, 10_000):
        samples, tokens, replacements = measure(messages, True, loop)
        print(f"{messages:>6} msgs {tokens:>9,} tokens warm  {stats(samples)}  ({replacements} replacements)")
        if messages == 1_000:
            verdict = statistics.median(samples) * 1000
    samples, tokens, _ = measure(1_000, False, loop)
    print(f"{1000:>6} msgs {tokens:>9,} tokens cold  {stats(samples)}  (includes counting every message)")
    print(f"target: 1,000 messages warm median <= 50 ms: {'met' if verdict <= 50 else 'NOT met'} ({verdict:.2f} ms)")
    loop.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
