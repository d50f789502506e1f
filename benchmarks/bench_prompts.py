"""Prompt engine timings: a realistic system prompt (main file + 6 included parts, ~4 KB, 10 placeholders,
2 `{{if}}` blocks, one variables loader) rendered warm and cold over 4 roots holding 50 prompt files.

Targets: warm <= 1 ms, cold (new engine, first render) <= 30 ms. Run: python benchmarks/bench_prompts.py"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from a0nb.files.prompts import PromptDir, PromptEngine  # noqa: E402

PARTS = ["role", "specifics", "environment", "communication", "solving", "tips"]
FILLER = ("Work step by step, check each result before relying on it, and say plainly what you could "
          "not verify. Prefer small, reversible actions; explain why before acting.\n")


def build(base: Path) -> list[PromptDir]:
    """4 roots; the bundled one holds the full set, higher ones override a few files; 50 files in all."""
    roots = [base / name for name in ("project", "notebook", "plugin", "bundled")]
    for r in roots:
        r.mkdir(parents=True)
    bundled, notebook, plugin = roots[3], roots[1], roots[2]
    main = "# System\n" + "".join(f'\n{{{{ include "agent.system.main.{p}.md" }}}}\n' for p in PARTS)
    (bundled / "agent.system.main.md").write_text(main)
    placeholders = iter(["agent_name", "date", "workdir", "os", "python", "model", "profile", "shell",
                         "memory", "tips_extra"])
    for i, part in enumerate(PARTS):
        names = [next(placeholders) for _ in range(2 if i < 4 else 1)]
        body = f"## {part}\n" + FILLER * 4 + " ".join(f"{n}: {{{{{n}}}}}." for n in names) + "\n"
        if part in ("environment", "tips"):
            body += f"{{{{if {names[0]} and profile != 'none'}}}}Extra for {part}.{{{{endif}}}}\n"
        (bundled / f"agent.system.main.{part}.md").write_text(body)
    (bundled / "agent.system.main.tips.py").write_text(
        "from a0nb.files.prompts import VariablesPlugin\n\n"
        "class Tips(VariablesPlugin):\n"
        "    def get_variables(self, file, backup_dirs=None, **kwargs):\n"
        "        return {'tips_extra': 'keep notes in the notebook'}\n")
    (notebook / "agent.system.main.role.md").write_text("{{include original}}\nNotebook addition.\n")
    (plugin / "agent.system.main.solving.md").write_text("{{include original}}\nPlugin addition.\n")
    (bundled / "fw.warning.md").write_text('```json\n{"system_warning": {{message}}}\n```\n')
    count = len(list(base.rglob("*.md")))
    for i in range(50 - count):
        (roots[i % 4] / f"agent.system.tool.t{i:02d}.md").write_text(f"### tool {i}\n" + FILLER)
    past = time.time() - 120  # real prompt folders were not written in the last 2 s (see _RACY_NS)
    for p in [base, *base.rglob("*")]:
        os.utime(p, (past, past))
    return [PromptDir(r, r.name) for r in roots]


KWARGS = dict(agent_name="A0", date="2026-05-01", workdir="/work", os="linux", python="3.11", model="m",
              profile="default", shell="bash", memory="on")


def timeit(fn: Callable[[], object], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def report(label: str, ms: list[float], target: float | None) -> None:
    med = statistics.median(ms)
    verdict = "" if target is None else (" OK" if med <= target else f" OVER target {target} ms")
    print(f"{label:<44} median {med:7.3f} ms  min {min(ms):7.3f}  max {max(ms):7.3f}  (n={len(ms)}){verdict}")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        dirs = build(Path(tmp))
        probe = PromptEngine(dirs).render("agent.system.main.md", **KWARGS)
        n_files = len(list(Path(tmp).rglob("*.md")))
        print(f"system prompt: {len(probe.text)} chars from {len(probe.sources)} files; "
              f"unknown={probe.unknown}; tree: 4 roots, {n_files} .md files")

        def cold() -> None:
            PromptEngine(dirs).render("agent.system.main.md", **KWARGS)

        engine = PromptEngine(dirs)
        engine.render("agent.system.main.md", **KWARGS)

        def warm() -> None:
            engine.render("agent.system.main.md", **KWARGS)

        cold()  # Python's own bytecode cache for the loader, as after any first session
        report("cold: new engine, first render", timeit(cold, 30), 30.0)
        report("warm: same engine, repeated render", timeit(warm, 500), 1.0)
        report("parse: fw JSON template, warm", timeit(lambda: engine.parse("fw.warning.md", message='say "hi"'), 500), None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
