"""Provider-layer figures: replaying 100 calls from a cassette, the per-chunk cost of the driver plus
process_chunk on an instant stream, and a0nb's per-call overhead over a bare litellm mock call.

Run: .venv/bin/python benchmarks/bench_providers.py   (offline; prints median/min/max, exits 0)"""
from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml  # noqa: E402

from a0nb.providers.base import ModelConfig, ModelReply  # noqa: E402
from a0nb.providers.stream import complete  # noqa: E402
from a0nb.providers.litellm_provider import LiteLLMProvider, _litellm  # noqa: E402
from a0nb.providers.registry import make_provider  # noqa: E402

REPEATS = 25
CALLS = 10
SYSTEM = "You are a0, an agent in a notebook.\n" + "Follow the rules of the tool prompt carefully. " * 40
REPLY = '{"thoughts": ["compute it"], "headline": "Computing", "tool_name": "code_execution", ' \
        '"tool_args": {"runtime": "python", "code": "print(17*23)"}}' + " " * 100


def stats(label: str, values: list[float], unit: str = "ms", scale: float = 1e3) -> None:
    v = [x * scale for x in values]
    print(f"{label:<58} median {statistics.median(v):9.3f} {unit}  min {min(v):9.3f}  max {max(v):9.3f}  (n={len(v)})")


def messages(i: int) -> list[dict[str, Any]]:
    return [{"role": "system", "content": SYSTEM + "\nCurrent datetime: 2026-01-31 09:30:00"},
            {"role": "user", "content": f"question number {i}: what is 17*23?"}]


# ---------------------------------------------------------------- 1. replay


def bench_replay(folder: Path) -> None:
    (folder / "replies.yaml").write_text(yaml.safe_dump([REPLY] * 100), encoding="utf-8")
    recorder = make_provider("record:calls.yaml:scripted:replies.yaml", folder)
    config = ModelConfig(spec="x", retries=0)

    async def record() -> None:
        for i in range(100):
            await complete(recorder, messages(i), config)

    asyncio.run(record())

    async def replay_all(provider: Any) -> None:
        for i in range(100):
            await complete(provider, messages(i), config)

    with_load, calls_only = [], []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        provider = make_provider("replay:calls.yaml", folder)
        t1 = time.perf_counter()
        asyncio.run(replay_all(provider))
        t2 = time.perf_counter()
        with_load.append(t2 - t0)
        calls_only.append(t2 - t1)
    stats("replay 100 calls, cassette load included (budget 200 ms)", with_load)
    stats("replay 100 calls, calls only", calls_only)


# ---------------------------------------------------------------- 2. per-chunk overhead


class InstantProvider(LiteLLMProvider):
    """LiteLLMProvider fed pre-built litellm chunks: what is left is the driver plus process_chunk."""

    def __init__(self, chunks: list[Any], cold: bool) -> None:
        super().__init__("openai/gpt-4o-mini")
        self.chunks, self.cold = chunks, cold

    async def stream(self, native: list[dict[str, Any]], state: dict[str, Any]) -> AsyncIterator[Any]:
        for chunk in self.chunks:
            yield chunk

    def finalize(self, state: dict[str, Any]) -> ModelReply:
        if self.cold:
            return super().finalize(state)
        return ModelReply(content="".join(state["partial"]["content"]))


class NullSink:
    async def reasoning(self, delta: str, full: str) -> None:
        return None

    async def response(self, delta: str, full: str) -> str | None:
        return None


def bench_chunks() -> None:
    litellm = _litellm()
    n = 2000
    chunks = [litellm.ModelResponseStream(choices=[{"index": 0, "delta": {"content": "abc"}}], model="gpt-4o-mini")
              for _ in range(n)]
    hot, bare, fold = InstantProvider(chunks, cold=False), [], []
    per_chunk, per_chunk_sink = [], []
    config = ModelConfig(spec="x", retries=0)

    async def only_iterate() -> None:
        async for _ in hot.stream([], {}):
            pass

    for _ in range(REPEATS):  # A/B interleaved: bare iteration, provider+driver, provider+driver+sink
        t0 = time.perf_counter()
        asyncio.run(only_iterate())
        t1 = time.perf_counter()
        asyncio.run(complete(hot, [], config))
        t2 = time.perf_counter()
        asyncio.run(complete(hot, [], config, NullSink()))
        t3 = time.perf_counter()
        state = hot.init(config)
        _, state = hot.initialize_request([], state)
        t4 = time.perf_counter()
        for chunk in chunks:
            hot.process_chunk(chunk, state)
        t5 = time.perf_counter()
        bare.append((t1 - t0) / n)
        per_chunk.append((t2 - t1) / n - (t1 - t0) / n)
        per_chunk_sink.append((t3 - t2) / n - (t1 - t0) / n)
        fold.append((t5 - t4) / n)
    stats("bare async iteration of the fake stream, per chunk", bare, "us", 1e6)
    stats("process_chunk alone, per chunk (budget 20 us)", fold, "us", 1e6)
    stats("driver + process_chunk, per chunk, no sink (budget 20 us)", per_chunk, "us", 1e6)
    stats("driver + process_chunk + async sink, per chunk", per_chunk_sink, "us", 1e6)
    usage = litellm.ModelResponseStream(choices=[], model="gpt-4o-mini")
    usage.usage = litellm.Usage(prompt_tokens=900, completion_tokens=50, total_tokens=950)
    for label, stream in (("50-chunk call + usage chunk, cold path included", chunks[:50] + [usage]),
                          ("50-chunk call, no usage chunk (chunk builder + cost)", chunks[:50])):
        cold, finals = InstantProvider(stream, cold=True), []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            asyncio.run(complete(cold, [{"role": "user", "content": "hi"}], config))
            finals.append(time.perf_counter() - t0)
        stats(label, finals)


# ---------------------------------------------------------------- 3. litellm direct vs complete()


def _quiesce() -> None:
    """Wait (at most 1 s) until litellm's logging executor holds no queued or running task, then collect garbage."""
    import gc
    try:
        from litellm.litellm_core_utils.thread_pool_executor import executor
        slots, cap = executor._pending_slots, executor._max_pending_tasks  # (private: a bench may peek)
    except (ImportError, AttributeError):
        slots = cap = None
    deadline = time.monotonic() + 1.0
    while slots is not None and slots._value < cap and time.monotonic() < deadline:
        time.sleep(0.0005)
    gc.collect()


def bench_overhead() -> None:
    litellm = _litellm()
    msgs = messages(0)
    text = "hello from the mock model, a reply of a few dozen characters"
    provider = LiteLLMProvider("openai/gpt-4o-mini")
    config = ModelConfig(spec="openai/gpt-4o-mini", retries=0, params={"mock_response": text})

    def direct_sync() -> None:
        litellm.completion(model="openai/gpt-4o-mini", messages=msgs, mock_response=text)

    async def direct_stream() -> None:
        stream = await litellm.acompletion(model="openai/gpt-4o-mini", messages=msgs, mock_response=text,
                                           stream=True, stream_options={"include_usage": True})
        async for _ in stream:
            pass

    async def via_a0nb() -> None:
        await complete(provider, msgs, config)

    def in_one_loop(fn: Callable[[], Any]) -> Callable[[], None]:
        async def many() -> None:
            for _ in range(CALLS):
                await fn()
        return lambda: asyncio.run(many())

    runs: dict[str, Callable[[], Any]] = {
        "litellm.completion(mock_response), not streamed": lambda: [direct_sync() for _ in range(CALLS)],
        "litellm.acompletion(stream=True) drained": in_one_loop(direct_stream),
        "complete(LiteLLMProvider): streamed, usage, cost": in_one_loop(via_a0nb),
    }
    for fn in runs.values():  # warm-up: litellm's lazy imports on first call
        fn()
    times: dict[str, list[float]] = {k: [] for k in runs}
    labels = list(runs)
    for r in range(REPEATS):
        # interleaved, each round in another order (A/B/C, B/C/A, C/A/B), and each sample starts quiet: the
        # non-streamed litellm.completion leaves success handlers queued on litellm's logging thread, and every
        # variant leaves garbage for the collector; with a fixed order that work ran inside the next variant's
        # timing, always the same one (the drained stream after the non-streamed call, a0nb after the stream)
        for label in labels[r % len(labels):] + labels[:r % len(labels)]:
            _quiesce()
            t0 = time.perf_counter()
            runs[label]()
            times[label].append((time.perf_counter() - t0) / CALLS)
    print(f"(per call; each sample is the mean of {CALLS} calls in one event loop)")
    for label, values in times.items():
        stats(label, values)
    a0 = times["complete(LiteLLMProvider): streamed, usage, cost"]
    base = times["litellm.acompletion(stream=True) drained"]
    stats("a0nb overhead per call vs the drained litellm stream", [x - y for x, y in zip(a0, base)])


def main() -> int:
    print(f"python {sys.version.split()[0]}, {REPEATS} repeats each\n")
    with tempfile.TemporaryDirectory() as tmp:
        bench_replay(Path(tmp))
    print()
    bench_chunks()
    print()
    bench_overhead()
    return 0


if __name__ == "__main__":
    sys.exit(main())
