"""Time parse_tool_request on a 2 KB and a 1 MB reply (valid JSON and dirty variants).
Prints median/min/max over repeated runs; run with `python benchmarks/bench_extract.py`."""
from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from a0nb.engine.dirty_json import DirtyJson  # noqa: E402
from a0nb.engine.extract import ToolRequest, parse_tool_request  # noqa: E402

REPEATS = 25


def reply(size: int) -> str:
    code = ("for i in range(10):\n    print('line', i)  # \"quoted\" {braces}\n" * (size // 55 + 1))[:size]
    body = {"thoughts": ["write the file", "then run it"], "headline": "Running code",
            "tool_name": "code_execution_tool", "tool_args": {"runtime": "python", "code": code}}
    return "Sure.\n" + json.dumps(body) + "\nTrailing prose the parser drops."


def dirty(text: str) -> str:
    """The same reply with unquoted keys and a trailing comma, so the strict fast path fails."""
    return text.replace('"tool_name"', "tool_name").replace('"runtime": "python"', "runtime: python,")


def token_dense(size: int) -> str:
    numbers = ", ".join(str(i % 1000) for i in range(size // 5))
    return "{tool_name: 'x', tool_args: {numbers: [" + numbers + ",]}}"


def stream(text: str, chunk: int = 64) -> Callable[[], object]:
    def run() -> object:
        parser = DirtyJson()
        for at in range(0, len(text), chunk):
            parser.feed(text[at:at + chunk])
        return parser.value
    return run


def timed(label: str, text: str, run: Callable[[], object] | None = None) -> None:
    call = run or (lambda: parse_tool_request(text))
    result = call()
    if run is None:
        assert isinstance(result, ToolRequest), result
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    print(f"{label:<46} {len(text) / 1024:>8.0f} KB  median {statistics.median(times):8.2f} ms"
          f"  min {min(times):8.2f}  max {max(times):8.2f}")


def main() -> int:
    small, large = reply(2 * 1024), reply(1024 * 1024)
    timed("parse_tool_request, 2 KB valid JSON", small)
    timed("parse_tool_request, 1 MB valid JSON", large)
    timed("parse_tool_request, 2 KB dirty JSON", dirty(small))
    timed("parse_tool_request, 1 MB dirty JSON", dirty(large))
    timed("parse_tool_request, 1 MB dirty, 200k small tokens", token_dense(1024 * 1024))
    timed("DirtyJson.feed, 1 MB in 64-char chunks", large, stream(large))
    plain = json.dumps({"tool_name": "response", "tool_args": {"text": "word " * 200_000}})
    timed("DirtyJson.feed, 1 MB unescaped text, 64-char chunks", plain, stream(plain))
    timed("DirtyJson.feed, 20 KB reply in 16-char chunks", reply(20 * 1024), stream(reply(20 * 1024), 16))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
