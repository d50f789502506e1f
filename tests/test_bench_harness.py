"""The benchmark harness (`make bench`): its quick mode runs end to end and writes the documented JSON and
Markdown; the statistics helpers are right. Shapes only — no timing is asserted."""
from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load_harness() -> object:
    """benchmarks/harness.py under a private name (benchmarks/ is no package; keep sys.path clean)."""
    spec = importlib.util.spec_from_file_location("a0bench_harness", BENCH / "harness.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


_h = _load_harness()
Report, Row, Stats = _h.Report, _h.Row, _h.Stats  # type: ignore[attr-defined]
interleave, loglog_slope, pairwise_ratios = _h.interleave, _h.loglog_slope, _h.pairwise_ratios  # type: ignore[attr-defined]
render_markdown, render_text = _h.render_markdown, _h.render_text  # type: ignore[attr-defined]

ROW_KEYS = {"key", "figure", "unit", "a0nb", "peer", "peer_value", "ratio", "goal", "holds", "note", "status",
            "samples"}
STATS_KEYS = {"median", "min", "max", "n"}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("bench")
    p = subprocess.run([sys.executable, str(BENCH / "run_all.py"), "--quick", "--no-peers", "--out", str(out)],
                       capture_output=True, text=True, timeout=240, check=False)
    return p, out


def _check_stats(s: object) -> None:
    assert isinstance(s, dict) and set(s) == STATS_KEYS
    assert s["n"] >= 1
    assert s["min"] <= s["median"] <= s["max"]


def test_quick_run_exits_zero_and_prints_the_table(quick_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    p, _ = quick_run
    assert p.returncode == 0, p.stderr[-3000:]
    header = p.stdout.splitlines()[0]
    for column in ("figure", "a0nb median", "peer", "ratio", "goal", "holds?"):
        assert column in header
    assert "latest.json" in p.stdout


def test_json_shape(quick_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    p, out = quick_run
    assert p.returncode == 0, p.stderr[-3000:]
    data = json.loads((out / "latest.json").read_text())
    assert data["schema"] == 1
    meta = data["meta"]
    assert meta["quick"] is True and meta["duration_s"] > 0 and meta["machine"] and meta["generated"]
    assert meta["peers"]["disabled"] is True and "pins" in meta["peers"]
    rows = data["rows"]
    assert rows and all(set(r) == ROW_KEYS for r in rows)
    assert len({r["key"] for r in rows}) == len(rows)
    errors = [r for r in rows if r["status"].startswith("error")]
    assert not errors, errors
    measured = {r["key"]: r for r in rows if r["a0nb"] is not None}
    for key in ("import", "load_ext", "first.scripted", "loop.step.10", "loop.step.100", "loop.exponent",
                "compaction.100", "prompt.warm", "prompt.cold", "extensions.resolve", "inspector.turn.size"):
        assert key in measured, sorted(measured)
    for r in rows:
        for field in ("a0nb", "peer_value", "ratio"):
            if r[field] is not None:
                _check_stats(r[field])
        assert r["holds"] in (True, False, None)
        if r["holds"] is not None:
            assert r["goal"]
    for r in rows:  # raw values, when kept, agree with the summary
        a0 = r["samples"].get("a0nb")
        if a0:
            assert len(a0) == r["a0nb"]["n"] and min(a0) == r["a0nb"]["min"] and max(a0) == r["a0nb"]["max"]
    assert measured["loop.step.10"]["samples"]["a0nb"]
    # without peers, a peer row keeps a0nb's figure, names the peer and says why its column is empty
    step = measured["loop.step.10"]
    assert step["peer"] and step["peer_value"] is None and step["ratio"] is None
    assert step["status"].startswith("peer unavailable") and step["holds"] is None
    # the import row's peer (IPython) lives in the main venv, so it is measured even without peers
    assert measured["import"]["peer_value"] is not None and measured["import"]["ratio"] is not None
    assert set(data["curves"]["loop_step"]) >= {"n", "a0nb_ms", "exponent"}
    assert data["curves"]["loop_step"]["n"] == [10, 100]
    assert set(data["misses"]) == {r["key"] for r in rows if r["holds"] is False}
    skipped = [r for r in rows if r["status"].startswith("skipped")]
    assert skipped and all(r["a0nb"] is None for r in skipped)


def test_markdown_table(quick_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    p, out = quick_run
    assert p.returncode == 0, p.stderr[-3000:]
    md = (out / "latest.md").read_text()
    lines = [ln for ln in md.splitlines() if ln.startswith("|")]
    data = json.loads((out / "latest.json").read_text())
    assert len(lines) == 2 + len(data["rows"])
    assert lines[0].startswith("| figure | a0nb median")
    assert all(ln.count(" | ") == lines[0].count(" | ") for ln in lines)


def test_stats_and_ratios() -> None:
    s = Stats.of([3.0, 1.0, 2.0])
    assert (s.median, s.min, s.max, s.n) == (2.0, 1.0, 3.0, 3)
    assert pairwise_ratios([2.0, 6.0], [1.0, 3.0]) == [2.0, 2.0]
    assert pairwise_ratios([1.0], [0.0]) == []
    with pytest.raises(ValueError):
        Stats.of([])


def test_loglog_slope_recovers_the_exponent() -> None:
    xs = [10, 100, 1000, 10000]
    assert math.isclose(loglog_slope(xs, [0.5 * x for x in xs]), 1.0, rel_tol=1e-9)
    assert math.isclose(loglog_slope(xs, [x ** 2 for x in xs]), 2.0, rel_tol=1e-9)
    assert math.isclose(loglog_slope(xs, [7.0] * 4), 0.0, abs_tol=1e-12)


def test_interleave_flips_the_order_each_round() -> None:
    calls: list[str] = []
    res = interleave(3, {"a": lambda: calls.append("a") or 1, "b": lambda: calls.append("b") or 2})
    assert calls == ["a", "b", "b", "a", "a", "b"]
    assert res == {"a": [1, 1, 1], "b": [2, 2, 2]}


def test_rendering_marks_misses_and_unavailable_peers() -> None:
    report = Report(meta={"generated": "now", "machine": "m", "duration_s": 1.0, "peers": {"summary": "x"}})
    report.add(Row("a", "fast thing", "ms", Stats.of([1.0, 2.0]), "peer", Stats.of([4.0]), Stats.of([0.5]),
                   "≤ 0.5×", True))
    report.add(Row("b", "slow thing", "ms", Stats.of([9.0]), goal="≤ 1 ms", holds=False))
    report.add(Row("c", "peered", "ms", Stats.of([1.0]), "smolagents", status="peer unavailable: no venv"))
    text, md = render_text(report), render_markdown(report)
    assert "1.50 ms (1.00–2.00)" in text and "0.500×" in text
    assert "**NO**" in md and "NO" in text and "peer unavailable: no venv" in md
    assert [r.key for r in report.misses()] == ["b"]
