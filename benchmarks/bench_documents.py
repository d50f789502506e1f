"""What `document_query` pays to search a document: three questions in one call, then the same document asked
again, with the memory's default embedder (MiniLM when `a0nb[memory]` is installed, else the lexical fallback).
"before" is one ranking per question that embeds the document with it (`rank_passages`, what document_qa did
until the passage indexes); "after" is the chat's PassageIndexes (the document embedded once, one embedding a
question). Medians of REPEATS runs, in seconds.
Run: python benchmarks/bench_documents.py [PASSAGES] [--json]"""
from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from a0nb.engine.documents import PassageIndexes, rank_passages  # noqa: E402
from a0nb.engine.memory.embeddings import make_embedder  # noqa: E402
from a0nb.engine.memory.knowledge import chunk_text  # noqa: E402

QUESTIONS = ["revenue in region 7", "staffing costs in region 42", "which region reported the lowest costs"]
SIZE = 1000  # (document_query's passage size)
REPEATS = 3


def document(passages: int) -> str:
    return "\n\n".join(f"Section {i}. The quarterly report for region {i} discusses revenue, costs and staffing; "
                       + "its figures are compared with the previous quarter and the same quarter a year ago. " * 8
                       for i in range(passages))


def measure(passages: int) -> dict[str, Any]:
    embedder = make_embedder("local")
    embedder.embed(["warm up"])  # the model's load is no part of a query
    text = document(passages)
    chunks = chunk_text(text, SIZE)
    before, after_first, after_again = [], [], []
    for _ in range(REPEATS):
        t = time.perf_counter()
        for q in QUESTIONS:
            rank_passages(chunks, q, embedder, 8)
        before.append(time.perf_counter() - t)
        indexes = PassageIndexes(embedder)
        t = time.perf_counter()
        for q in QUESTIONS:
            indexes.get(text, SIZE).ranked(q, 8)
        after_first.append(time.perf_counter() - t)
        t = time.perf_counter()
        for q in QUESTIONS:
            indexes.get(text, SIZE).ranked(q, 8)
        after_again.append(time.perf_counter() - t)
    return {"embedder": type(embedder).__name__, "passages": len(chunks),
            "before_s": statistics.median(before), "after_first_s": statistics.median(after_first),
            "after_again_s": statistics.median(after_again)}


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv if a.isdigit()] or [100]
    for n in sizes:
        r = measure(n)
        if "--json" in argv:
            print(json.dumps(r))
            continue
        print(f"{r['passages']} passages, {r['embedder']}, {len(QUESTIONS)} questions: before {r['before_s']:.2f} s "
              f"(asked again: the same), after {r['after_first_s']:.2f} s, asked again {r['after_again_s']:.3f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
