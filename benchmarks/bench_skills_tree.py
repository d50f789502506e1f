"""Benchmarks for a0nb.files.file_tree and a0nb.files.skills: tree of a 20,000-file folder, search over 500
skills, warm and cold SkillIndex.get over 500 skills on disk. Prints median/min/max; exits 0."""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from a0nb.diagnostics import Diagnostics  # noqa: E402
from a0nb.files.file_tree import file_tree  # noqa: E402
from a0nb.files.skills import Skill, SkillIndex, discover_skills, search_skills  # noqa: E402

REPEATS = 30
WORDS = "pdf plot data frame chart debug trace web scrape image audio text parse json csv sql git test".split()


def timed(label: str, fn: Callable[[], object], budget_ms: float | None = None, repeats: int = REPEATS) -> None:
    fn()  # warm-up: imports, regex compilation, OS caches
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - start) * 1000)
    med = statistics.median(runs)
    verdict = "" if budget_ms is None else (f"  (target <= {budget_ms:g} ms: " + ("ok)" if med <= budget_ms else "OVER)"))
    print(f"{label:<52} median {med:8.3f} ms  min {min(runs):8.3f}  max {max(runs):8.3f}{verdict}")


def create(path: Path) -> None:
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))


def make_tree(root: Path) -> int:
    """20 top folders x 10 sub-folders x 100 files = 20,000 files in 220 folders."""
    count = 0
    for top in range(20):
        for sub in range(10):
            folder = root / f"top{top:02}" / f"sub{sub:02}"
            folder.mkdir(parents=True)
            for f in range(100):
                create(folder / f"file{f:03}.{'py' if f % 3 else 'pyc'}")
                count += 1
    return count


def make_skills(root: Path, n: int) -> None:
    for i in range(n):
        folder = root / f"skill-{i:03}"
        folder.mkdir(parents=True)
        tags = ", ".join(WORDS[(i + k) % len(WORDS)] for k in range(3))
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:03}-{WORDS[i % len(WORDS)]}\n"
            f"description: Helps with {WORDS[(i * 7) % len(WORDS)]} and {WORDS[(i * 3) % len(WORDS)]} tasks.\n"
            f"tags: [{tags}]\n---\nBody of skill {i}.\n"
        )
        if i % 5 == 0:
            (folder / "reference.md").write_text("more")


def fake_skills(n: int) -> list[Skill]:
    return [
        Skill(
            name=f"skill-{i:03}-{WORDS[i % len(WORDS)]}",
            description=f"Helps with {WORDS[(i * 7) % len(WORDS)]} and {WORDS[(i * 3) % len(WORDS)]} tasks.",
            path=Path(f"s{i}/SKILL.md"), folder=Path(f"s{i}"), root_label="bench",
            tags=tuple(WORDS[(i + k) % len(WORDS)] for k in range(3)),
        )
        for i in range(n)
    ]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="a0nb-bench-") as tmp:
        base = Path(tmp)
        tree_root = base / "tree"
        print(f"generating folder: {make_tree(tree_root)} files ...")
        timed("file_tree, 20k files, defaults", lambda: file_tree(tree_root), 100)
        timed("file_tree, 20k files, defaults + ignore '*.pyc'", lambda: file_tree(tree_root, ignore="*.pyc\n"), 100)
        timed(
            "file_tree, 20k files, wide limits (whole walk)",
            lambda: file_tree(tree_root, max_depth=10, max_files=200, max_folders=200,
                              max_lines=100_000, max_total_scan=100_000),
            repeats=20,
        )
        lines = len(file_tree(tree_root).splitlines())
        print(f"  (default tree has {lines} lines)")

        skills = fake_skills(500)
        timed("search_skills, 500 skills, 1 term", lambda: search_skills(skills, "pdf"), 5)
        timed("search_skills, 500 skills, 3 terms", lambda: search_skills(skills, "plot data chart"), 5)

        skills_root = base / "skills"
        make_skills(skills_root, 500)
        roots = [("bench", skills_root)]
        found = discover_skills(roots, Diagnostics())
        print(f"  ({len(found)} skills on disk)")
        timed("discover_skills (cold walk + parse), 500 skills", lambda: discover_skills(roots, Diagnostics()), repeats=20)
        index = SkillIndex(Diagnostics())
        index.get(roots)
        timed("SkillIndex.get warm (nothing changed), 500 skills", lambda: index.get(roots))
        assert index.discoveries == 1, "warm calls must not re-discover"
    return 0


if __name__ == "__main__":
    sys.exit(main())
