"""Kernel memory over a long scripted session: VmRSS / VmHWM of a real ipykernel (main venv) after
`%load_ext a0nb` and after 200 and 2,000 scripted steps (asks of 20 steps each, one history), against a
bare kernel; per-step growth is the RSS difference between the two points over the steps between them.

`--keep N` runs the kernel with A0NB_RECORD_KEEP=N (all but the newest N records spilled to a trace file).

Usage: python benchmarks/bench_rss.py [--steps 200,2000] [--keep N] [--json]"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import external  # noqa: E402

STEPS_PER_ASK = 20


def vm_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {key} for pid {pid}")


def measure(points: list[int], keep: int = 0) -> dict[str, object]:
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", A0NB_RECORD_KEEP=str(keep))
    out: dict[str, object] = {"points": {}}
    with tempfile.TemporaryDirectory(prefix="a0bench-rss-") as tmp:
        bare = external.Kernel(sys.executable, Path(tmp), env)
        try:
            bare.run("pass")
            out["bare_rss_kb"] = vm_kb(bare.pid, "VmRSS")
        finally:
            bare.close()
        folder = Path(tmp) / "nb"
        folder.mkdir()
        asks = max(points) // STEPS_PER_ASK
        external.session_script(folder, asks, STEPS_PER_ASK)
        k = external.Kernel(sys.executable, folder, env)
        try:
            k.run("pass")
            k.run("%load_ext a0nb")
            out["load_ext_rss_kb"] = vm_kb(k.pid, "VmRSS")
            setup = ("from a0nb.notebook.magics import get_magics\n_a = get_magics(get_ipython()).agent\n"
                     "_a.register_tool(lambda i=0: 'ok', name='noop')")
            k.run(setup)
            k.run("%a0 model scripted:session.yaml")
            done = 0
            for point in sorted(points):
                while done < point:
                    k.run("%a0 ask next", timeout=600)
                    done += STEPS_PER_ASK
                k.run("import gc; gc.collect()")
                k.run(f"assert len(_a.calls) == {done}, len(_a.calls)")
                out["points"][str(point)] = {"rss_kb": vm_kb(k.pid, "VmRSS"), "hwm_kb": vm_kb(k.pid, "VmHWM")}  # type: ignore[index]
        finally:
            k.close()
    pts = sorted(points)
    p = out["points"]
    assert isinstance(p, dict)
    if len(pts) > 1:
        out["growth_kb_per_step"] = (p[str(pts[-1])]["rss_kb"] - p[str(pts[0])]["rss_kb"]) / (pts[-1] - pts[0])
    return out


def main(argv: list[str]) -> None:
    steps = [200, 2000]
    if "--steps" in argv:
        steps = [int(x) for x in argv[argv.index("--steps") + 1].split(",")]
    r = measure(steps, keep=int(argv[argv.index("--keep") + 1]) if "--keep" in argv else 0)
    bare = r["bare_rss_kb"] / 1024  # type: ignore[operator]
    print(f"bare kernel {bare:.1f} MB; after %load_ext {r['load_ext_rss_kb'] / 1024:.1f} MB")  # type: ignore[operator]
    for n, v in r["points"].items():  # type: ignore[attr-defined]
        print(f"after {int(n):,} steps: RSS {v['rss_kb'] / 1024:.1f} MB ({v['rss_kb'] / 1024 / bare:.2f}x bare), "
              f"peak {v['hwm_kb'] / 1024:.1f} MB")
    if "growth_kb_per_step" in r:
        print(f"growth per step between the points: {r['growth_kb_per_step']:.2f} kB")
    if "--json" in argv:
        print(json.dumps(r))


if __name__ == "__main__":
    main(sys.argv[1:])
