"""Bytes a saved notebook grows by per `%a0 ask` (issue 20: <= 6 KB for a plain ask by default): a real kernel
runs asks of 1, 2 and 3 model calls from scripted replies; each ask cell's outputs are measured as nbformat
stores them (JSON of the outputs list, HTML + text/plain + metadata + the footer).
Run: python benchmarks/bench_saved_bytes.py [--json]"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

GOAL = 6 * 1024
ANSWER = {"thoughts": ["I can answer now."], "headline": "Answering", "tool_name": "response",
          "tool_args": {"text": "The total is **87** units; Oslo sold the most (41)."}}
CODE = {"thoughts": ["Sum the units first."], "headline": "Summing units", "tool_name": "code_execution",
        "tool_args": {"runtime": "python", "code": "print(sum([41, 12, 34]))"}}
ASKS = {  # name: the scripted replies the ask consumes (one per model call)
    "plain ask (1 call)": [ANSWER],
    "one tool step (2 calls)": [CODE, ANSWER],
    "two tool steps (3 calls)": [CODE, CODE, ANSWER],
}


def measure() -> dict[str, int]:
    with tempfile.TemporaryDirectory() as folder:
        replies = [json.dumps(r) for rs in ASKS.values() for r in rs]
        Path(folder, "replies.yaml").write_text(json.dumps(replies), encoding="utf-8")
        cells = ["%load_ext a0nb\n%config A0.approval = 'auto'\n%config A0.frozen_time = '2026-01-15T09:30:00'\n"
                 "%a0 model scripted:replies.yaml"]
        cells += [f"%a0 ask {name}: how many units?" for name in ASKS]
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
        os.environ.update(env)
        NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": folder}}).execute()
        return {name: len(json.dumps(cell.outputs, ensure_ascii=False, indent=1)) for name, cell in zip(ASKS, nb.cells[1:])}


def main() -> None:
    sizes = measure()
    if "--json" in sys.argv:
        print(json.dumps({"goal_bytes": GOAL, "bytes_per_ask": sizes}))
        return
    for name, size in sizes.items():
        mark = "ok" if size <= GOAL or "plain" not in name else "over"
        print(f"{name:<28} {size:>7,} bytes saved{'  (goal ' + format(GOAL, ',') + ': ' + mark + ')' if 'plain' in name else ''}")


if __name__ == "__main__":
    main()
