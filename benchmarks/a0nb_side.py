"""a0nb's half of the benchmarks, run with the main venv's python. It reuses the single benchmarks
(bench_loop, bench_compaction, bench_prompts, bench_providers, bench_inspector, …) and returns raw samples.

`python a0nb_side.py once NAME JSON` runs one fresh-process figure; `python a0nb_side.py serve` is a worker."""
from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from harness import emit, serve

MODEL = "openai/gpt-4o-mini"
# the smallest reply that ends a turn: fewer mock chunks (litellm streams a mock 3 characters at a time)
ANSWER = '{"tool_name": "response", "tool_args": {"text": "hi"}}'
MOCK_EXTENSION = f'''"""Benchmark only: answer every chat call from litellm's mock_response (no network)."""
from a0nb import Extension


class MockResponse(Extension):
    def execute(self, call_data=None, **kwargs):
        call_data["config"].params["mock_response"] = {ANSWER!r}
'''


# -- fresh processes: load and first call ----------------------------------------------------------

def prepare_notebook(folder: Path, mode: str) -> None:
    """`real`: an extension file next to the notebook sets mock_response (the way a user would pass a
    litellm param per call); `scripted`: a one-reply script."""
    folder.mkdir(parents=True, exist_ok=True)
    if mode == "real":
        ext = folder / "extensions" / "chat_model_call_before"
        ext.mkdir(parents=True, exist_ok=True)
        (ext / "_10_mock_response.py").write_text(MOCK_EXTENSION, encoding="utf-8")
    (folder / "reply.yaml").write_text(json.dumps([ANSWER] * 50), encoding="utf-8")


def once_first(folder: str, mode: str) -> dict[str, float]:
    """A fresh shell; `%load_ext a0nb`; `%a0 model openai/gpt-4o-mini`; a first `%a0 ask`, answered by litellm
    (`real`, mock_response) or by a scripted model while the real one stays configured (`scripted`)."""
    nb = Path(folder)
    prepare_notebook(nb, mode)
    os.chdir(nb)
    t0 = time.perf_counter()
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    t1 = time.perf_counter()
    shell.run_line_magic("load_ext", "a0nb")
    t2 = time.perf_counter()
    shell.run_line_magic("a0", f"model {MODEL}")
    t3 = time.perf_counter()
    ask = "ask hello" if mode == "real" else "ask --model scripted:reply.yaml hello"
    shell.run_line_magic("a0", ask)
    t4 = time.perf_counter()
    from a0nb.notebook.magics import get_magics
    agent = get_magics(shell).agent
    turn = agent.turns[-1] if agent.turns else None
    if turn is None or "hi" not in turn.text:
        raise SystemExit(f"the first ask did not answer: {turn!r} {agent.diagnostics!r}")
    return {"import_ipython_and_shell": t1 - t0, "load_ext": t2 - t1, "model": t3 - t2, "first_ask": t4 - t3,
            "load_and_first": t4 - t1, "litellm_loaded": float("litellm" in sys.modules)}


def once_shell() -> dict[str, float]:
    t0 = time.perf_counter()
    from IPython.core.interactiveshell import InteractiveShell
    InteractiveShell.instance()
    return {"import_ipython_and_shell": time.perf_counter() - t0, "load_ext": 0.0}


ONCE: dict[str, Callable[..., Any]] = {"first": once_first, "shell": once_shell}


# -- worker: in-process figures --------------------------------------------------------------------

def loop_step(n: int, files: bool = False) -> float:
    """One run of bench_loop: median ms between chat-model calls over 20 steps after N history messages
    (`files`: in a notebook folder with 110 files, bench_loop.populate). The folder is made in the working
    directory, which run_all trusts (so the folder's tools load, as in a user's trusted folder)."""
    import bench_loop
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as tmp:
        agent = bench_loop.make_agent(Path(tmp), n, files)
        try:
            return bench_loop.per_step(agent) * 1000
        finally:
            agent.shared.bridge.close()  # else every run leaves its loop thread behind in this worker


def compaction(n: int, repeats: int) -> list[float]:
    """bench_compaction.measure (warm token caches, instant summariser): ms per compaction."""
    import bench_compaction
    bench_compaction.REPEATS = repeats
    loop = asyncio.new_event_loop()
    try:
        samples, _tokens, _replacements = bench_compaction.measure(n, True, loop)
    finally:
        loop.close()
    return [s * 1000 for s in samples]


def prompts(warm: int, cold: int) -> dict[str, list[float]]:
    """bench_prompts' system prompt over 4 roots / 50 files: a new engine's first render, and repeats."""
    import bench_prompts

    from a0nb.files.prompts import PromptEngine
    with tempfile.TemporaryDirectory() as tmp:
        dirs = bench_prompts.build(Path(tmp))
        render = lambda engine: engine.render("agent.system.main.md", **bench_prompts.KWARGS)
        render(PromptEngine(dirs))  # Python's own bytecode cache for the loader, as after any first session
        cold_ms = bench_prompts.timeit(lambda: render(PromptEngine(dirs)), cold)
        engine = PromptEngine(dirs)
        render(engine)
        warm_ms = bench_prompts.timeit(lambda: render(engine), warm)
    return {"warm": warm_ms, "cold": cold_ms}


def providers(repeats: int, parts: list[str]) -> dict[str, list[float]]:
    """bench_providers' three parts, with its `stats` printer swapped for a collector: label -> values (s)."""
    import bench_providers
    captured: dict[str, list[float]] = {}
    bench_providers.stats = lambda label, values, *a, **k: captured.__setitem__(label, list(values))
    bench_providers.REPEATS = repeats
    if "replay" in parts:
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            bench_providers.bench_replay(Path(tmp))
            total = time.perf_counter() - t
        # bench_replay first records the cassette it replays (untimed there): the rest of its time is that
        timed = sum(captured.get("replay 100 calls, cassette load included (budget 200 ms)", []))
        captured["record 100 calls"] = [total - timed]
    if "chunks" in parts:
        bench_providers.bench_chunks()
    if "overhead" in parts:
        bench_providers.bench_overhead()
    return captured


def litellm_chunks(chars: int, repeats: int) -> list[float]:
    """litellm's own cost per streamed chunk of a mock reply (ms): the floor a0nb's per-chunk cost sits on."""
    from a0nb.providers.litellm_provider import _litellm
    litellm = _litellm()
    text = ("The quick brown fox jumps over the lazy dog. " * (chars // 40 + 1))[:chars]
    msgs = [{"role": "user", "content": "hello"}]

    async def drain() -> int:
        stream = await litellm.acompletion(model=MODEL, messages=msgs, mock_response=text, stream=True)
        n = 0
        async for _ in stream:
            n += 1
        return n

    asyncio.run(drain())
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        n = asyncio.run(drain())
        out.append((time.perf_counter() - t) / n * 1000)
    return out


def _page(html: str) -> str:
    return f"<!doctype html><html><head><meta charset='utf-8'></head><body>{html}</body></html>"


def inspector(repeats: int, folder: str) -> dict[str, Any]:
    """bench_inspector's turn over a 1,000-message history: render_turn and render_call samples (ms), HTML
    bytes, and both pages written to `folder` (turn.html, call.html) for the browser."""
    import bench_inspector

    from a0nb.inspector import render_call, render_turn
    from a0nb.engine.tokens import TokenCounter
    from a0nb.engine.turn import Turn
    counter = TokenCounter()
    h = bench_inspector.history(counter)
    records = [bench_inspector.record(i, h, counter) for i in (1, 2, 3)]
    turn = Turn(1, "Describe the data frame.", "It has 1,000 rows.", calls=records)
    bench_inspector.REPEATS = repeats
    turn_s, turn_r = bench_inspector.timed(lambda: render_turn(turn, folder="/"))
    call_s, call_r = bench_inspector.timed(lambda: render_call(records[0], folder="/"))
    Path(folder, "turn.html").write_text(_page(turn_r.html), encoding="utf-8")
    Path(folder, "call.html").write_text(_page(call_r.html), encoding="utf-8")
    return {"turn_ms": [s * 1000 for s in turn_s], "turn_bytes": len(turn_r.html.encode()),
            "call_ms": [s * 1000 for s in call_s], "call_bytes": len(call_r.html.encode()),
            "messages": bench_inspector.MESSAGES, "call_messages": len(records[0].messages)}


def inspector_live() -> dict[str, int]:
    """bench_inspector.live_traffic: characters sent while one call streams, and the step card's state."""
    import bench_inspector

    from a0nb import Agent
    from a0nb.engine.tokens import TokenCounter
    counter = TokenCounter()
    h = bench_inspector.history(counter)
    records = [bench_inspector.record(i, h, counter) for i in (1, 2, 3)]
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(tmp, model=[json.dumps(records[0].tool_request)])
        agent.history, agent.models.records = h, list(records)
        sent, card, calls_tab, history_tab = bench_inspector.live_traffic(agent, records)
    return {"sent": sent, "card": card, "calls_tab": calls_tab, "history_tab": history_tab}


def extensions(rounds: int) -> dict[str, list[float]]:
    """bench_extensions: resolving one point's extensions, warm (µs per resolve, one value per round)."""
    import bench_extensions

    from a0nb import Agent
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(tmp, model=["{}"])
        point = "message_loop_prompts_after"
        agent.extensions.resolve(point)
        out = []
        for _ in range(rounds):
            med, _lo, _hi = bench_extensions.timeit(lambda: agent.extensions.resolve(point), 500)
            out.append(med)
    return {"resolve_us": out}


def skills_tree(repeats: int) -> dict[str, list[float]]:
    """bench_skills_tree's 20,000-file folder (default limits: asked again, then walked afresh each time) and
    500-skill search (ms)."""
    import bench_skills_tree as b

    from a0nb.files.file_tree import file_tree
    from a0nb.files.skills import search_skills

    def timed(fn: Callable[[], object]) -> list[float]:
        fn()
        out = []
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t) * 1000)
        return out

    from a0nb.files import file_tree as file_tree_module

    def walk(root: Path) -> str:
        file_tree_module._TREES.clear()  # (the tree kept from the call before: this one walks)
        return file_tree(root)

    with tempfile.TemporaryDirectory(prefix="a0nb-bench-") as tmp:
        root = Path(tmp) / "tree"
        b.make_tree(root)
        tree = timed(lambda: file_tree(root))
        tree_walk = timed(lambda: walk(root))
    skills = b.fake_skills(500)
    search = timed(lambda: search_skills(skills, "plot data chart"))
    return {"tree_ms": tree, "tree_walk_ms": tree_walk, "search_ms": search}


HANDLERS: dict[str, Callable[..., Any]] = {
    "loop_step": loop_step, "compaction": compaction, "prompts": prompts, "providers": providers,
    "litellm_chunks": litellm_chunks, "inspector": inspector, "inspector_live": inspector_live,
    "extensions": extensions, "skills_tree": skills_tree,
}


def main(argv: list[str]) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if argv[:1] == ["serve"]:
        serve(HANDLERS)
        return
    if argv[:1] == ["once"] and len(argv) >= 2:
        sink = open(os.devnull, "w")  # noqa: SIM115 - the shell's display output is no part of the figure
        real_stdout, sys.stdout = sys.stdout, sink
        try:
            result = ONCE[argv[1]](**(json.loads(argv[2]) if len(argv) > 2 else {}))
        finally:
            sys.stdout = real_stdout
        emit(result)
        sys.stderr.flush()
        os._exit(0)  # litellm's interpreter exit costs ~1 s and is no part of any figure
    raise SystemExit("usage: a0nb_side.py serve | once NAME [JSON]")


if __name__ == "__main__":
    main(sys.argv[1:])
