"""Benchmark harness plumbing shared by the a0nb side and the peer side (stdlib only, so it also runs in
the peer venv): summary statistics, A/B interleaving, worker processes spoken to in JSON lines, the table."""
from __future__ import annotations

import json
import math
import os
import select
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RESULT_MARK = "@@A0BENCH "  # a fresh process prints its result on a line starting with this (libraries print too)


# -- statistics ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stats:
    median: float
    min: float
    max: float
    n: int

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats:
        if not samples:
            raise ValueError("no samples")
        return cls(statistics.median(samples), min(samples), max(samples), len(samples))

    def scaled(self, factor: float) -> Stats:
        return Stats(self.median * factor, self.min * factor, self.max * factor, self.n)


def pairwise_ratios(a: Sequence[float], b: Sequence[float]) -> list[float]:
    """a_i / b_i for the rounds where both ran; the ratio of each A B pair, so drift hits both sides."""
    return [x / y for x, y in zip(a, b) if y > 0]


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of log(y) on log(x): the exponent k of y ~ x^k."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-12)) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    den = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / den if den else float("nan")


def interleave(rounds: int, variants: Mapping[str, Callable[[], Any]]) -> dict[str, list[Any]]:
    """Run every variant once per round, A B / B A / A B …: the order flips each round so that neither side
    always runs first (after a cold cache or a warm CPU)."""
    names = list(variants)
    out: dict[str, list[Any]] = {n: [] for n in names}
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for name in order:
            out[name].append(variants[name]())
    return out


# -- processes -------------------------------------------------------------------------------------

class WorkerError(RuntimeError):
    """A worker process failed, timed out or answered with an error."""


def emit(result: Any) -> None:
    """Print the result of a one-shot process on its marked line."""
    sys.stdout.write(RESULT_MARK + json.dumps(result) + "\n")
    sys.stdout.flush()


def run_once(argv: Sequence[str], *, env: Mapping[str, str], cwd: str | Path | None = None,
             timeout: float = 120.0) -> tuple[Any, float]:
    """Run a fresh process that ends with `emit(...)`; returns (its result, the process's wall time in s)."""
    start = time.perf_counter()
    p = subprocess.run(list(argv), env=dict(env), cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       check=False)
    wall = time.perf_counter() - start
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith(RESULT_MARK)]
    if p.returncode != 0 or not lines:
        tail = (p.stderr or p.stdout)[-1500:]
        raise WorkerError(f"{' '.join(map(str, argv[:4]))}… exited {p.returncode}: {tail}")
    return json.loads(lines[-1][len(RESULT_MARK):]), wall


class Worker:
    """A long-lived process answering JSON-line requests: {"fn": name, "args": {...}} -> {"ok", "result"|"error"}.
    Only one side runs at a time (the other waits on its pipe), so A and B never compete for the 2 cores."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str | Path | None = None,
                 log: Path | None = None) -> None:
        self.argv = list(argv)
        self._log = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(self.argv, env=dict(env), cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._log)
        self._buf = b""

    def call(self, fn: str, timeout: float = 300.0, **args: Any) -> Any:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps({"fn": fn, "args": args}) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError as exc:
            raise WorkerError(f"{fn}: the worker exited ({self.proc.poll()})") from exc
        reply = json.loads(self._readline(timeout, fn))
        if not reply.get("ok"):
            raise WorkerError(f"{fn}: {reply.get('error')}")
        return reply["result"]

    def _readline(self, timeout: float, fn: str) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise WorkerError(f"{fn}: no answer within {timeout:.0f} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise WorkerError(f"{fn}: the worker exited ({self.proc.wait()})")
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        if self._log is not subprocess.DEVNULL:
            self._log.close()


def serve(handlers: Mapping[str, Callable[..., Any]]) -> None:
    """The worker side of `Worker`: answers on the real stdout; whatever libraries print goes to stderr."""
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            reply = {"ok": True, "result": handlers[req["fn"]](**req.get("args", {}))}
        except Exception as exc:  # noqa: BLE001 - reported to the harness, which marks the row
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


# -- the table -------------------------------------------------------------------------------------

@dataclass
class Row:
    """One line of the table. Values are in `unit`; `ratio` is a0nb / peer, median of the pairs."""

    key: str
    figure: str
    unit: str
    a0nb: Stats | None = None
    peer: str = ""
    peer_value: Stats | None = None
    ratio: Stats | None = None
    goal: str = ""
    holds: bool | None = None
    note: str = ""
    status: str = "ok"  # ok | peer unavailable | skipped | error
    samples: dict[str, list[float]] = field(default_factory=dict)  # raw values per side, in `unit`

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    curves: dict[str, Any] = field(default_factory=dict)

    def add(self, row: Row, **samples: Sequence[float]) -> Row:
        """Append a row; `samples` (side name -> raw values in the row's unit) go into the JSON."""
        row.samples.update({k: list(v) for k, v in samples.items() if v})
        self.rows.append(row)
        return row

    def misses(self) -> list[Row]:
        return [r for r in self.rows if r.holds is False]

    def to_dict(self) -> dict[str, Any]:
        return {"schema": 1, "meta": self.meta, "rows": [r.to_dict() for r in self.rows], "curves": self.curves,
                "misses": [r.key for r in self.misses()]}


def num(x: float) -> str:
    """Three significant figures, no exponent for everyday sizes."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    digits = max(0, 2 - math.floor(math.log10(a)))
    return f"{x:.{digits}f}"


def cell(s: Stats | None, unit: str = "", spread: bool = True) -> str:
    if s is None:
        return "—"
    u = f" {unit}" if unit and unit != "×" else ("×" if unit == "×" else "")
    if not spread or s.n == 1 or s.min == s.max:
        return f"{num(s.median)}{u}"
    return f"{num(s.median)}{u} ({num(s.min)}–{num(s.max)})"


def _holds(r: Row) -> str:
    return {True: "yes", False: "**NO**", None: "—" if r.goal else ""}[r.holds]


def columns(r: Row) -> list[str]:
    peer = r.peer
    if r.status != "ok" and r.status != "":
        peer = f"{peer} [{r.status}]".strip() if peer else f"[{r.status}]"
    return [r.figure, cell(r.a0nb, r.unit), peer or "—", cell(r.peer_value, r.unit, spread=False),
            cell(r.ratio, "×"), r.goal or "—", _holds(r)]


HEADER = ["figure", "a0nb median (min–max)", "peer", "peer median", "ratio", "goal", "holds?"]


def render_text(report: Report) -> str:
    rows = [HEADER] + [columns(r) for r in report.rows]
    rows = [[c.replace("**", "") for c in row] for row in rows]
    widths = [min(max(len(row[i]) for row in rows), 58) for i in range(len(HEADER))]
    lines = []
    for j, row in enumerate(rows):
        lines.append(" | ".join(c.ljust(w) if len(c) <= w else c[: w - 1] + "…" for c, w in zip(row, widths)))
        if j == 0:
            lines.append("-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def render_markdown(report: Report) -> str:
    m = report.meta
    title = (f"Benchmarks, {m.get('generated', '')} on {m.get('machine', '')} "
             f"(`make bench`, {m.get('duration_s', 0):.0f} s; peers: {m.get('peers', {}).get('summary', 'n/a')})")
    out = [title, ""]
    out.append("| " + " | ".join(HEADER) + " |")
    out.append("| " + " | ".join("---" for _ in HEADER) + " |")
    for r in report.rows:
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in columns(r)) + " |")
    notes = [r for r in report.rows if r.note]
    if notes:
        out += ["", "Notes:", ""] + [f"- **{r.figure}**: {r.note}" for r in notes]
    return "\n".join(out) + "\n"


def write_results(report: Report, folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    js, md = folder / "latest.json", folder / "latest.md"
    tmp = folder / "latest.json.tmp"
    tmp.write_text(json.dumps(report.to_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(js)
    md.write_text(render_markdown(report), encoding="utf-8")
    return js, md
