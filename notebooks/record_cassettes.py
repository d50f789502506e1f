"""Regenerate the notebooks' cassettes, then re-execute every notebook in place from its cassette, so the
stored outputs are those of a clean replay run (what `pytest --nbval` compares against).

    .venv/bin/python notebooks/record_cassettes.py              # every notebook
    .venv/bin/python notebooks/record_cassettes.py 02 04        # notebooks whose folder starts with 02 / 04
    .venv/bin/python notebooks/record_cassettes.py --replay-only  # keep the cassettes, refresh the outputs

Recording runs a copy of the notebook in which `%a0 replay C` becomes `%a0 model record:C:scripted:replies.yaml`
(and `%a0 utility replay:C` becomes `%a0 utility record:C:scripted:utility.yaml`): the scripted replies next to
the notebook play the model, and every call they answer lands in the cassette. Cells tagged `no-record` are
left out of the recording run: they exist to show a strict-replay miss, so their calls must not be recorded.
06 records itself with the `local:` model when A0NB_RECORD=1 (and keeps its committed cassette otherwise).
"""
from __future__ import annotations

import argparse
import copy
import re
import sys
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from a0nb.notebook.demo import replay_env

HERE = Path(__file__).resolve().parent
# folder trust: the notebooks run their own folders' extensions and tools (replay_env passes this on)
os.environ["A0NB_TRUST"] = os.pathsep.join(v for v in (os.environ.get("A0NB_TRUST"), str(HERE)) if v)
CASSETTE_GLOB = "*.cassette.yaml"
NO_RECORD = "no-record"
TIMEOUT = 600


@dataclass(frozen=True)
class Recipe:
    """How one notebook is recorded."""

    replies: str = "replies.yaml"
    utility: str = "utility.yaml"
    substitute: bool = True       # rewrite the replay lines into record lines for the recording run
    self_recording: bool = False  # the notebook records its own cassette (06, with `local:`)


RECIPES = {
    "06-record-replay-regression": Recipe(substitute=False, self_recording=True),
}


def notebooks(prefixes: list[str]) -> list[Path]:
    found = sorted(p for p in HERE.glob("[0-9][0-9]-*/[0-9][0-9]-*.ipynb") if p.parent.name == p.stem)
    if prefixes:
        found = [p for p in found if any(p.stem.startswith(x) for x in prefixes)]
    return found


def recording_copy(nb: nbformat.NotebookNode, recipe: Recipe) -> nbformat.NotebookNode:
    """The notebook as the recording run executes it."""
    rec = copy.deepcopy(nb)
    rec.cells = [c for c in rec.cells if NO_RECORD not in c.get("metadata", {}).get("tags", [])]
    if not recipe.substitute:
        return rec
    chat = re.compile(r"^%a0 replay (\S+)\s*$", re.M)
    utility = re.compile(r"^%a0 utility replay:(\S+)\s*$", re.M)
    for cell in rec.cells:
        if cell.cell_type == "code":
            cell.source = chat.sub(rf"%a0 model record:\1:scripted:{recipe.replies}", cell.source)
            cell.source = utility.sub(rf"%a0 utility record:\1:scripted:{recipe.utility}", cell.source)
    return rec


def execute(nb: nbformat.NotebookNode, folder: Path, extra_env: dict[str, str] | None = None) -> None:
    # python3 from this environment, as `pytest --nbval --nbval-current-env` runs it (07 included), with
    # the clean environment nbval gets from notebooks/conftest.py
    client = NotebookClient(nb, timeout=TIMEOUT, kernel_name="python3", store_widget_state=False,
                            resources={"metadata": {"path": str(folder)}})
    with tempfile.TemporaryDirectory(prefix="a0nb-record-home-") as home:
        client.execute(env={**replay_env(Path(home)), **(extra_env or {})})


def shown_errors(nb: nbformat.NotebookNode, allowed: bool) -> list[str]:
    """a0 errors are displayed, not raised, so nbclient would not notice them: list those outside
    `no-record` cells (or in every cell when `allowed` is False)."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or (allowed and NO_RECORD in cell.get("metadata", {}).get("tags", [])):
            continue
        for out in cell.get("outputs", []):
            if (out.get("metadata") or {}).get("a0", {}).get("error"):
                found.append(f"cell {i}: {out['data'].get('text/plain', '')[:300]}")
    return found


def check(path: Path, nb: nbformat.NotebookNode, what: str, allowed: bool) -> None:
    errors = shown_errors(nb, allowed)
    if errors:
        raise SystemExit(f"{path.name}: the {what} run showed errors:\n  " + "\n  ".join(errors))


def record(path: Path, recipe: Recipe) -> None:
    nb = nbformat.read(path, as_version=4)
    if not recipe.self_recording:
        for old in path.parent.glob(CASSETTE_GLOB):
            old.unlink()  # recording appends: start each cassette afresh
    rec = recording_copy(nb, recipe)
    execute(rec, path.parent, {"A0NB_RECORD": "1"} if recipe.self_recording else None)
    check(path, rec, "recording", allowed=False)


def replay(path: Path) -> None:
    """Execute in place from the cassette; the result is what the notebook stores."""
    nb = nbformat.read(path, as_version=4)
    execute(nb, path.parent)
    check(path, nb, "replay", allowed=True)  # a miss is only expected where the notebook shows one
    nb.metadata.pop("widgets", None)  # GitHub cannot render widget state; the outputs are static anyway
    nbformat.write(nb, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("only", nargs="*", help="notebook name prefixes (default: all)")
    parser.add_argument("--replay-only", action="store_true", help="keep the cassettes; only refresh the outputs")
    args = parser.parse_args(argv)
    paths = notebooks(args.only)
    if not paths:
        print("no notebooks match", args.only, file=sys.stderr)
        return 2
    for path in paths:
        recipe = RECIPES.get(path.stem, Recipe())
        started = time.perf_counter()
        if not args.replay_only:
            record(path, recipe)
        replay(path)
        cassettes = ", ".join(p.name for p in sorted(path.parent.glob(CASSETTE_GLOB))) or "no cassette"
        print(f"{path.relative_to(HERE)}: {cassettes} ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
