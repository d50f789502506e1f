"""Instructions executed per loop step, a0nb against smolagents, counted by valgrind (cachegrind, no cache
simulation): a figure that does not move with the load or the speed phase of the machine, where the CPU-time
rows of `make bench` do. It is a companion to those rows, not their replacement: it counts user-space
instructions only, so what a step costs in the kernel (system calls, thread wake-ups) and in cache misses is
not in it. The gap between the two is how much a step pays for that.

Each side runs the same scripted session (bench_loop.make_agent; peer_side.smol_steps) twice, once with SHORT
and once with LONG tool steps per ask, over ASKS asks after one warm-up ask; the difference of the two totals
divided by the extra steps is the per-step count (start-up, imports and agent creation cancel out).

    python benchmarks/bench_instructions.py [N ...]     (default 10 100 200 1000; writes results/instructions.md)
Needs valgrind on PATH and the peer venv (`make bench` creates it)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHORT, LONG, ASKS = 4, 24, 3  # steps per ask (a0nb's default max_iterations is 25), asks after the warm-up

A0NB_SIDE = f"""
import sys, tempfile
from pathlib import Path
sys.path[:0] = [{str(ROOT)!r}, {str(HERE)!r}]
import bench_loop
n, steps = int(sys.argv[1]), int(sys.argv[2])
bench_loop.STEPS = steps
with tempfile.TemporaryDirectory() as tmp:
    for _ in range({ASKS} + 1):
        bench_loop.per_step(bench_loop.make_agent(Path(tmp), n))
"""

PEER_SIDE = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
import peer_side
n, steps = int(sys.argv[1]), int(sys.argv[2])
for _ in range({ASKS} + 1):
    peer_side.smol_steps(n, steps)
"""


def instructions(python: str, code: str, n: int, steps: int) -> int:
    """User-space instructions of one whole run of `code` (`n` history messages, `steps` steps per ask)."""
    # one hash seed for every run (set and dict orders, so the same work); the code runs from the repository's
    # root, whose mtime is old: a folder on sys.path changed in the last 2 s makes each new Agent read every
    # installed distribution's entry points again (files/plugins.py), which once moved a count by 0.7 M per step
    env = {**os.environ, "A0NB_TRUST": os.environ.get("A0NB_TRUST", "*"), "A0NB_APPROVAL": "auto",
           "PYTHONHASHSEED": "0"}
    run = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                          python, "-c", code, str(n), str(steps)], capture_output=True, text=True, env=env, cwd=ROOT)
    found = re.search(r"I\s+refs:\s+([\d,]+)", run.stderr)
    if run.returncode != 0 or found is None:
        raise SystemExit(f"valgrind run failed ({python}, n={n}, steps={steps}):\n{run.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def per_step(python: str, code: str, n: int) -> float:
    return (instructions(python, code, n, LONG) - instructions(python, code, n, SHORT)) / ((ASKS + 1) * (LONG - SHORT))


def main(sizes: list[int]) -> str:
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not on PATH (apt install valgrind)")
    peer = HERE / ".venv-peers" / "bin" / "python"
    if not peer.exists():
        raise SystemExit(f"no peer venv at {peer}: run `make bench` once to create it")
    started = time.time()
    rows = ["| history | a0nb | smolagents | ratio |", "|---|---|---|---|"]
    for n in sizes:
        ours, theirs = per_step(sys.executable, A0NB_SIDE, n), per_step(str(peer), PEER_SIDE, n)
        rows.append(f"| {n:,} messages | {ours / 1e6:.3f} M | {theirs / 1e6:.3f} M | {ours / theirs:.2f}× |")
        print(rows[-1], flush=True)
    return "\n".join([
        "# Instructions per loop step (valgrind cachegrind; user space only)", "",
        f"`python benchmarks/bench_instructions.py {' '.join(map(str, sizes))}`: "
        f"{(ASKS + 1) * (LONG - SHORT)} extra steps per figure, {time.time() - started:.0f} s in all. "
        "One commit measures within about ±3 % from run to run (when collections fall, with the tool thread interleaved); the CPU-time rows in latest.md are the goal's measure.", "", *rows, ""])


if __name__ == "__main__":
    text = main([int(a) for a in sys.argv[1:]] or [10, 100, 200, 1000])
    out = HERE / "results" / "instructions.md"
    out.write_text(text)
    print(f"written: {out.relative_to(ROOT)}")
