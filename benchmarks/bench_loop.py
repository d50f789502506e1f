"""Framework overhead per loop iteration with the scripted model (no model latency), default
extensions, and N history messages already in place. Prints median/min/max per N.

The clock is CPU time of the whole process (time.process_time: every thread, the loop thread included),
so other processes loading the machine do not count; smolagents' figure (peer_side.smol_steps) uses the same clock."""
from __future__ import annotations

import json
import os
import statistics as st
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from a0nb import Agent  # noqa: E402
from a0nb.testing import answer, tool_reply  # noqa: E402

STEPS = 20
REPLIES = 1000  # the scripted list's length whatever STEPS is (enough for 50 asks of 20 steps): loading it is set-up,
# and bench_instructions' per-step figure is the difference of two runs with different STEPS


def populate(folder: Path) -> None:
    """A notebook folder as people keep one: 100 data files (50 at the top, 5 sub-folders of 10) and 10 files
    of their own next to it (tools and prompt files), all older than the clock's reach (`racy_ns`)."""
    for j in range(5):
        (folder / f"data{j}").mkdir(exist_ok=True)
        for i in range(10):
            (folder / f"data{j}" / f"part{i}.csv").write_text("a,b\n1,2\n")
    for i in range(50):
        (folder / f"note{i}.txt").write_text("x")
    (folder / "tools").mkdir(exist_ok=True)
    (folder / "prompts").mkdir(exist_ok=True)
    for i in range(5):
        (folder / "tools" / f"helper{i}.py").write_text(TOOL.format(i=i))
        (folder / "prompts" / f"my.note{i}.md").write_text(f"note {i}")
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            os.utime(os.path.join(root, name), (1_600_000_000, 1_600_000_000))
    os.utime(folder, (1_600_000_000, 1_600_000_000))


TOOL = """from a0nb import Response, Tool


class Helper{i}(Tool):
    async def execute(self, **kwargs):
        return Response(message="helper {i}", break_loop=False)
"""


def make_agent(folder: Path, history: int, files: bool = False) -> Agent:
    if files:
        populate(folder)
    replies = [tool_reply("noop", i=i) for i in range(STEPS - 1)] + [answer("done")]
    agent = Agent(folder, model=replies * (REPLIES // STEPS), settings={"ctx_length": 10_000_000})
    agent.register_tool(lambda i=0: "ok", name="noop")
    for i in range(history // 2):
        agent.history.add(False, {"user_message": f"question {i} " + "words " * 20}, "user")
        agent.history.add(True, tool_reply("noop", i=i), "ai")
    return agent


def per_step(agent: Agent) -> float:
    stamps: list[float] = []
    agent.register_extension("chat_model_call_before", lambda: stamps.append(time.process_time()), name="stamp")
    agent.ask("go")
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    return st.median(gaps)


def main() -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    sizes = [int(a) for a in sys.argv[1:]] or [10, 200, 1000]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for n in sizes:
            runs = []
            for _ in range(7):
                agent = make_agent(folder, n)
                runs.append(per_step(agent) * 1000)
            results[str(n)] = {"median_ms": st.median(runs), "min_ms": min(runs), "max_ms": max(runs)}
            print(f"history {n:6d}: per step median {st.median(runs):.3f} ms (min {min(runs):.3f}, max {max(runs):.3f}, n=7x{STEPS})")
    return results


if __name__ == "__main__":
    out = main()
    if "--json" in sys.argv:
        print(json.dumps(out))
