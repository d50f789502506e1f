"""The first real ask of a session against a provider that takes a while to answer: a fresh process, `%load_ext
a0nb`, `%a0 model openai/gpt-4o-mini` with `api_base` on a loopback OpenAI-compatible server (stdlib, started and
stopped here) that waits LATENCY seconds before its first byte, as a hosted model does, then streams a short
answer with a usage chunk; then `%a0 ask` at once (a cell with both lines). What the ask costs beyond the
provider's own wait is litellm's import and the first streamed call's prompt pricing, which loads tiktoken's
encodings. With --imported, litellm is imported before the clock starts (its import, 3-4 s and noisy, is then no
part of the figure). Medians of RUNS processes, in seconds.
Run: python benchmarks/bench_first_call.py [LATENCY] [--imported] [--json]"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

RUNS = 5
ANSWER = '{"tool_name": "response", "tool_args": {"text": "hi"}}'


def serve(latency: float) -> ThreadingHTTPServer:
    """An OpenAI-compatible /v1/chat/completions on 127.0.0.1 (a free port) that streams ANSWER after `latency`."""
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            self.rfile.read(int(self.headers.get("content-length", 0)))
            time.sleep(latency)
            base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini"}
            chunks = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ANSWER[i:i + 16]},
                                           "finish_reason": None}]) for i in range(0, len(ANSWER), 16)]
            chunks.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
            chunks.append(dict(base, choices=[], usage={"prompt_tokens": 900, "completion_tokens": 16,
                                                         "total_tokens": 916}))
            body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


ONE_RUN = """
import json, os, sys, time
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
sys.stdout = open(os.devnull, "w")
if sys.argv[1:] == ["imported"]:  # litellm imported already (its import is no part of the figure then)
    import litellm
t0 = time.perf_counter()
shell.run_line_magic("load_ext", "a0nb")
shell.run_line_magic("a0", "model openai/gpt-4o-mini")
t1 = time.perf_counter()
shell.run_line_magic("a0", "ask hello")
t2 = time.perf_counter()
from a0nb.notebook.magics import get_magics
turn = get_magics(shell).agent.turns[-1]
assert "hi" in turn.text, (turn.text, turn.error)
sys.stderr.write(json.dumps({"setup": t1 - t0, "first_ask": t2 - t1}) + "\\n")
os._exit(0)
"""


def measure(latency: float, imported: bool = False) -> dict[str, float]:
    server = serve(latency)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        asks = []
        for _ in range(RUNS):
            with tempfile.TemporaryDirectory() as folder:
                env = {**os.environ, "OPENAI_API_KEY": "sk-loopback", "A0NB_API_BASE": base,
                       "A0NB_HOME": str(Path(folder) / "home"),
                       "A0NB_TRUST": folder, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
                p = subprocess.run([sys.executable, "-c", ONE_RUN, *(["imported"] if imported else [])], cwd=folder, env=env, capture_output=True,
                                   text=True, timeout=300)
                if p.returncode != 0:
                    raise SystemExit(p.stderr[-2000:])
                asks.append(json.loads(p.stderr.strip().splitlines()[-1])["first_ask"])
        return {"latency_s": latency, "imported": imported, "first_ask_s": statistics.median(asks), "min_s": min(asks),
                "max_s": max(asks)}
    finally:
        server.shutdown()


def main(argv: list[str]) -> None:
    latency = float(next((a for a in argv if not a.startswith("--")), "0.8"))
    r = measure(latency, "--imported" in argv)
    if "--json" in argv:
        print(json.dumps(r))
    else:
        print(f"first ask with a provider that answers after {latency:.2f} s"
              f"{' (litellm imported before)' if r['imported'] else ''}: {r['first_ask_s']:.2f} s "
              f"(min {r['min_s']:.2f}, max {r['max_s']:.2f}, {RUNS} processes)")


if __name__ == "__main__":
    main(sys.argv[1:])
