"""Whole-process import cost: `python -c "import a0nb"` against `python -c "import IPython"`, interleaved
(A B A B …) so drift hits both; prints medians and the difference (goal: ≤ 150 ms more than IPython)."""
from __future__ import annotations

import json
import statistics as st
import subprocess
import sys
import time

RUNS = 9


def once(code: str) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - t


def main() -> dict[str, float]:
    once("import a0nb; import IPython")  # warm the file cache
    a, b, heavy = [], [], []
    for _ in range(RUNS):
        a.append(once("import a0nb"))
        b.append(once("import IPython"))
        heavy.append(once("import a0nb, sys; assert not any(m in sys.modules for m in ('litellm', 'IPython', 'ipywidgets'))"))
    out = {"a0nb_ms": st.median(a) * 1000, "ipython_ms": st.median(b) * 1000,
           "diff_ms": st.median([x - y for x, y in zip(a, b)]) * 1000,
           "a0nb_min_ms": min(a) * 1000, "a0nb_max_ms": max(a) * 1000}
    print(f"import a0nb   median {out['a0nb_ms']:.1f} ms (min {out['a0nb_min_ms']:.1f}, max {out['a0nb_max_ms']:.1f}, n={RUNS})")
    print(f"import IPython median {out['ipython_ms']:.1f} ms")
    print(f"difference (pairwise median) {out['diff_ms']:+.1f} ms   goal: <= +150 ms; a0nb imports no litellm/IPython/ipywidgets")
    return out


if __name__ == "__main__":
    result = main()
    if "--json" in sys.argv:
        print(json.dumps(result))
