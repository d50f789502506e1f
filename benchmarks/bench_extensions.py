"""Resolving the extensions of one point, warm (hierarchy unchanged): goal ≤ 50 µs; plus the per-step
hierarchy change check, and an @extensible call with no extensions."""
from __future__ import annotations

import json
import statistics as st
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from a0nb import Agent  # noqa: E402


def timeit(fn, n: int = 2000) -> tuple[float, float, float]:
    xs = []
    for _ in range(25):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        xs.append((time.perf_counter() - t) / n * 1e6)
    return st.median(xs), min(xs), max(xs)


def main() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(tmp, model=["{}"])
        agent.extensions.resolve("message_loop_prompts_after")
        res = timeit(lambda: agent.extensions.resolve("message_loop_prompts_after"))
        ref = timeit(agent.hierarchy.refresh, 200)
        print(f"resolve one point, warm: median {res[0]:.2f} µs (min {res[1]:.2f}, max {res[2]:.2f})   goal <= 50 µs")
        print(f"hierarchy change check (once per step): median {ref[0]:.1f} µs (min {ref[1]:.1f}, max {ref[2]:.1f})")
        return {"resolve_us": res[0], "refresh_us": ref[0]}


if __name__ == "__main__":
    out = main()
    if "--json" in sys.argv:
        print(json.dumps(out))
