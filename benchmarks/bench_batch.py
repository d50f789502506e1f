"""Agent.map (issue 22): per-item framework overhead over single asks (threads, scripted model), 100 items on
a local 2-CPU Ray against threads, and throughput against `concurrency` under a simulated latency and rate
limit. Writes benchmarks/results/batch.md.

    .venv/bin/python benchmarks/bench_batch.py [--items 20] [--no-ray]

CPU time (time.process_time: every thread of this process) measures the overhead: wall time on a shared
machine moves with the neighbours' load. Ray's work happens in other processes, so Ray is compared on wall
time, as is throughput (the simulated model sleeps: that is what concurrency overlaps)."""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("A0NB_TRUST", "*")
os.environ.setdefault("A0NB_FROZEN_TIME", "2026-01-31T09:30:00")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from a0nb import Agent  # noqa: E402
from a0nb.ext import ProviderPlugin  # noqa: E402
from a0nb.testing import answer  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "batch.md"
TEMPLATE = "Which country is city number {item} in?"


def replies(n: int) -> list[dict[str, Any]]:
    return [{"when": f"city number {i} in", "content": answer(f"country {i}")} for i in range(n)]


def cpu(fn: Any) -> tuple[float, float, Any]:
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - c, time.perf_counter() - w, out


def overhead(folder: Path, n: int, rounds: int) -> dict[str, float]:
    """Per item: a fresh agent + ask, one after another (the same work by hand) vs map(concurrency=1)."""
    script = replies(n)
    Agent(folder, model=script).map(list(range(2)), TEMPLATE)  # warm: imports, encoder, bundled files
    single, mapped, wall_single, wall_mapped = [], [], [], []
    for _ in range(rounds):
        def by_hand() -> None:
            for i in range(n):
                Agent(folder, model=script).ask(TEMPLATE.format(item=i))
        c, w, _ = cpu(by_hand)
        single.append(c / n)
        wall_single.append(w / n)
        c, w, result = cpu(lambda: Agent(folder, model=script).map(list(range(n)), TEMPLATE, concurrency=1))
        assert not result.failed, result.errors
        mapped.append(c / n)
        wall_mapped.append(w / n)
    s, m = statistics.median(single), statistics.median(mapped)
    return {"single_cpu": s, "map_cpu": m, "overhead": (m - s) / s,
            "single_wall": statistics.median(wall_single), "map_wall": statistics.median(wall_mapped)}


def ray_vs_threads(folder: Path, n: int, concurrency: int) -> dict[str, float] | str:
    try:
        import ray
    except ImportError:
        return "Ray is not installed (pip install 'a0nb[ray]')"
    script = replies(n)
    agent = Agent(folder, model=script)
    _, threads_wall, result = cpu(lambda: agent.map(list(range(n)), TEMPLATE, concurrency=concurrency))
    assert not result.failed, result.errors
    try:
        started = time.perf_counter()
        agent.map([0], TEMPLATE, executor="ray")  # starts the local Ray and one worker (not counted per item)
        startup = time.perf_counter() - started
        _, ray_wall, result = cpu(lambda: agent.map(list(range(n)), TEMPLATE, executor="ray", concurrency=concurrency))
    except Exception as exc:  # noqa: BLE001 - reported in the table
        return f"local Ray did not run here: {type(exc).__name__}: {str(exc)[:160]}"
    finally:
        ray.shutdown()
    assert not result.failed, result.errors[:3]
    return {"threads": threads_wall / n, "ray": ray_wall / n, "ratio": ray_wall / threads_wall, "startup": startup}


class Simulated(ProviderPlugin):
    """A model that answers after LATENCY seconds and serves at most RATE calls per second (callers queue)."""

    name = "simulated"
    LATENCY, RATE = 0.2, 10.0
    lock = threading.Lock()
    next_slot = 0.0

    def init(self, config: Any) -> dict[str, Any]:
        return {}

    def call_api(self, native: Any, state: Any) -> Any:
        with Simulated.lock:
            now = time.monotonic()
            slot = max(now, Simulated.next_slot)
            Simulated.next_slot = slot + 1.0 / Simulated.RATE
        time.sleep(slot - now + Simulated.LATENCY)
        final = {"role": "assistant", "content": answer("simulated")}
        return [], [final], [*native, final], state


def throughput(folder: Path, n: int, levels: list[int]) -> list[tuple[int, float]]:
    agent = Agent(folder, model="simulated:x")
    agent.register_provider(Simulated)
    out = []
    for c in levels:
        Simulated.next_slot = 0.0
        _, wall, result = cpu(lambda: agent.map(list(range(n)), TEMPLATE, concurrency=c))
        assert not result.failed, result.errors[:2]
        out.append((c, n / wall))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="a0nb-bench-batch-"))
    lines = ["# Agent.map benchmark (issue 22)", "",
             f"`python benchmarks/bench_batch.py` on {os.cpu_count()} CPUs, shared with other jobs (load "
             f"{os.getloadavg()[0]:.1f} at the start): CPU time for the overhead, wall time where the work is "
             "elsewhere (Ray's processes) or is waiting (the simulated model).", ""]
    o = overhead(folder, args.items, args.rounds)
    lines += ["## Per-item overhead on threads (scripted model, budget ≤ 10 %)", "",
              "| per item | CPU ms | wall ms |", "|---|---:|---:|",
              f"| fresh agent + `ask`, by hand | {o['single_cpu'] * 1e3:.1f} | {o['single_wall'] * 1e3:.1f} |",
              f"| `map(concurrency=1)` | {o['map_cpu'] * 1e3:.1f} | {o['map_wall'] * 1e3:.1f} |",
              f"| **overhead of map** | **{o['overhead']:+.1%}** | |", ""]
    print("\n".join(lines[-7:]), flush=True)
    if not args.no_ray:
        r = ray_vs_threads(folder, 100, 2)
        lines += ["## 100 items: local Ray (2 CPUs) vs threads, concurrency 2 (budget ≤ 2×)", ""]
        if isinstance(r, str):
            lines += [f"Not measured: {r}", ""]
        else:
            lines += ["| per item (wall) | ms |", "|---|---:|", f"| threads | {r['threads'] * 1e3:.1f} |",
                      f"| Ray | {r['ray'] * 1e3:.1f} |", f"| **Ray / threads** | **{r['ratio']:.2f}×** |",
                      f"| (Ray start + first item, not counted) | {r['startup'] * 1e3:.0f} |", ""]
        print("\n".join(lines[-8:]), flush=True)
    t = throughput(folder, 40, [1, 2, 4, 8, 16])
    lines += [f"## Throughput vs concurrency (simulated model: {Simulated.LATENCY * 1e3:.0f} ms per call, "
              f"rate limit {Simulated.RATE:.0f} calls/s; 40 items)", "",
              "| concurrency | items/s | ideal min(c / latency, rate) |", "|---:|---:|---:|"]
    lines += [f"| {c} | {rate:.2f} | {min(c / Simulated.LATENCY, Simulated.RATE):.1f} |" for c, rate in t]
    print("\n".join(lines[-len(t) - 4:]), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"written to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
