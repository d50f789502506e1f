"""Where one loop step's time goes: cProfile over the steps of bench_loop's scripted turn (from its first
chat-model call to its last, after a warm-up turn), at 10 and 1,000 history messages, printed per step (the ten largest own costs, and the ten
largest cumulative costs among a0nb's functions), in CPU time (time.process_time). Run before and after an optimisation and compare.

Usage: python benchmarks/profile_step.py [N ...] [--out FILE]"""
from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_loop  # noqa: E402

TOP = 10
ROUNDS = 5


def _profile(n: int, rounds: int = ROUNDS) -> tuple[pstats.Stats, int, float]:
    """One profiler over `rounds` turns of fresh agents (more steps, less noise)."""
    # the profiler's clock is CPU time: a thread start or a lock wait counts what it costs, not how long
    # the shared machine kept this process waiting
    profiler, steps_done, wall = cProfile.Profile(time.process_time), 0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        warm = bench_loop.make_agent(Path(tmp), n)
        asyncio.run(warm.ask_async("warm up"))  # imports, prompt files, encoder: paid once, not per step
        for _ in range(rounds):
            agent = bench_loop.make_agent(Path(tmp), n)
            steps: list[float] = []

            async def stamp() -> None:  # (async: runs in the loop thread) first chat call to last: whole steps
                steps.append(time.perf_counter())
                if len(steps) == 1:
                    profiler.enable()
                elif len(steps) == bench_loop.STEPS:
                    profiler.disable()

            agent.register_extension("chat_model_call_before", stamp, name="stamp")
            asyncio.run(agent.ask_async("go"))  # in this thread, so the profiler sees the whole loop
            profiler.disable()
            steps_done += len(steps) - 1
            wall += steps[-1] - steps[0]
    return pstats.Stats(profiler), steps_done, wall / steps_done


def cpu_per_step(n: int, rounds: int = ROUNDS) -> tuple[float, float]:
    """(median CPU ms, median wall ms) per step without the profiler: CPU time (all threads of this process)
    is what a step costs even when other processes load the machine, wall time is what bench_loop reports."""
    cpu: list[float] = []
    wall: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(bench_loop.make_agent(Path(tmp), n).ask_async("warm up"))
        for _ in range(rounds):
            agent = bench_loop.make_agent(Path(tmp), n)
            stamps: list[tuple[float, float]] = []

            async def stamp() -> None:
                stamps.append((time.process_time(), time.perf_counter()))

            agent.register_extension("chat_model_call_before", stamp, name="stamp")
            asyncio.run(agent.ask_async("go"))
            cpu += [(b[0] - a[0]) * 1e3 for a, b in zip(stamps, stamps[1:])]
            wall += [(b[1] - a[1]) * 1e3 for a, b in zip(stamps, stamps[1:])]
    return statistics.median(cpu), statistics.median(wall)


def _rows(stats: pstats.Stats, steps: int, key: int, only_a0nb: bool) -> list[str]:
    entries = []
    for (file, line, name), (_cc, calls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if only_a0nb and "a0nb" not in file and "/extensions/" not in file and "/tools/" not in file:
            continue
        where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if file != "~" else "<builtin>"
        entries.append((tottime if key == 0 else cumtime, calls, where, name))
    entries.sort(reverse=True)
    return [f"  {t / steps * 1e6:9.1f} us  {calls / steps:8.1f} calls  {name}  ({where})"
            for t, calls, where, name in entries[:TOP]]


def report(n: int) -> str:
    cpu, plain_wall = cpu_per_step(n)
    stats, steps, wall = _profile(n)
    total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
    out = io.StringIO()
    print(f"== history {n:,} messages: {steps} steps profiled, {total / steps * 1e3:.3f} ms of profiled CPU time per "
          f"step (profiler overhead included; wall between model calls {wall * 1e3:.3f} ms)", file=out)
    print(f"   without the profiler: {cpu:.3f} ms CPU per step (median, process_time), {plain_wall:.3f} ms wall", file=out)
    print(f"   Python function calls per step: {stats.total_calls / steps:,.0f} (exact, independent of load)",  # type: ignore[attr-defined]
          file=out)
    print(f"-- the {TOP} largest own costs per step (tottime)", file=out)
    print("\n".join(_rows(stats, steps, 0, False)), file=out)
    print(f"-- the {TOP} largest cumulative costs per step among a0nb's functions (cumtime)", file=out)
    print("\n".join(_rows(stats, steps, 1, True)), file=out)
    return out.getvalue()


def main(argv: list[str]) -> None:
    out = None
    if "--out" in argv:
        i = argv.index("--out")
        out, argv = Path(argv[i + 1]), argv[:i] + argv[i + 2:]
    sizes = [int(a) for a in argv] or [10, 1000]
    text = "\n".join(report(n) for n in sizes)
    print(text)
    if out is not None:
        out.write_text(text)


if __name__ == "__main__":
    main(sys.argv[1:])
