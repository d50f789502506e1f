"""`a0nb demo` (`make demo`): run notebooks/01-quickstart headless from its cassette, save the executed
notebook and an HTML export, and print where they are and how to open JupyterLab."""
from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from a0nb.atomic_io import write_text
from a0nb.notebook.headless import notebook_client

QUICKSTART = "01-quickstart"
TIMEOUT = 300  # seconds per cell; a replayed cell takes well under one
KERNEL = "python3"  # this environment's Python kernel: the quickstart loads a0nb itself
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
KERNEL_ENV: Mapping[str, str] = MappingProxyType({
    # no cost-map download and no network at all in the kernel: the demo replays a cassette
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
})


# what a0nb reads from the environment besides the agent settings themselves
_OTHER_VARS = ("A0NB_HOME", "A0NB_PROFILE", "A0NB_FORMAT", "A0NB_CHAT", "A0NB_STATIC")


def agent_env_vars() -> set[str]:
    """Environment variables that change what an agent sends (and so whether a cassette matches)."""
    from a0nb.settings import env_var, setting_names
    return {env_var(name) for name in setting_names()} | set(_OTHER_VARS)


def replay_env(home: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` (default: this process's) as a replaying kernel should see it: no a0nb settings from the
    user's shell, and an empty `$A0NB_HOME`, so nothing outside the repository reaches a recorded request."""
    source = os.environ if environ is None else environ
    drop = agent_env_vars()
    env = {k: v for k, v in source.items() if k not in drop}
    env.update(KERNEL_ENV)
    env["A0NB_HOME"] = str(home)
    # the project's own notebooks run their folders' extensions and tools: trusted explicitly (folder trust)
    env["A0NB_TRUST"] = os.pathsep.join(v for v in (source.get("A0NB_TRUST"), str(repo_root() / "notebooks")) if v)
    return env


@dataclass(frozen=True)
class DemoPaths:
    notebook: Path
    executed: Path
    html: Path


def repo_root() -> Path:
    """The checkout this module runs from (the demo needs its `notebooks/` folder)."""
    return Path(__file__).resolve().parents[2]


def paths_for(output_dir: Path, root: Path) -> DemoPaths:
    notebook = root / "notebooks" / QUICKSTART / f"{QUICKSTART}.ipynb"
    return DemoPaths(notebook, output_dir / f"{QUICKSTART}.executed.ipynb", output_dir / f"{QUICKSTART}.html")


def execute(notebook: Path) -> tuple[Any, str | None]:
    """The executed notebook node (as far as it got) and the error of the cell that raised, if one did."""
    import nbformat
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(notebook, as_version=4)
    failed = None
    with tempfile.TemporaryDirectory(prefix="a0nb-demo-home-") as home, \
            notebook_client(nb, kernel_name=KERNEL, timeout=TIMEOUT, folder=notebook.parent,
                            store_widget_state=False) as client:
        try:
            client.execute(env=replay_env(Path(home)))
        except CellExecutionError as exc:
            lines = _ANSI.sub("", str(exc)).strip().splitlines()
            failed = lines[-1] if lines else type(exc).__name__
    nb.metadata.pop("widgets", None)  # the outputs are static; widget state would only confuse viewers
    return nb, failed


def shown_errors(nb: Any) -> list[str]:
    """a0 shows errors (a cassette miss, say) as output instead of raising: find them."""
    found = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if (out.get("metadata") or {}).get("a0", {}).get("error"):
                found.append(str(out.get("data", {}).get("text/plain", "")).splitlines()[0][:300])
    return found


def export_html(nb: Any, target: Path) -> None:
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nb)
    write_text(target, body, "demo page")


def main(output_dir: str | Path | None = None) -> int:
    """Run the demo; files go to `output_dir` (default: demo-output/ in the checkout). 0 on success."""
    import nbformat

    root = repo_root()
    out = Path(output_dir).resolve() if output_dir is not None else root / "demo-output"
    paths = paths_for(out, root)
    if not paths.notebook.is_file():
        print(f"a0nb demo: {paths.notebook} not found; the demo runs from a checkout of the a0nb repository",
              file=sys.stderr)
        return 1
    print(f"a0nb demo: running {paths.notebook.relative_to(root)} headless, replaying its cassette ...", flush=True)
    started = time.perf_counter()
    nb, failed = execute(paths.notebook)
    errors = shown_errors(nb) + ([f"a cell raised {failed}"] if failed else [])
    out.mkdir(parents=True, exist_ok=True)
    write_text(paths.executed, nbformat.writes(nb), "executed notebook")  # even after an error: it shows where
    export_html(nb, paths.html)
    elapsed = time.perf_counter() - started
    if errors:
        print("a0nb demo: the notebook did not replay cleanly (if its prompts changed, re-record with "
              "notebooks/record_cassettes.py):\n  " + "\n  ".join(errors), file=sys.stderr)
    print(f"\nexecuted notebook  {paths.executed}\nHTML export        {paths.html}\n"
          f"({elapsed:.1f} s)\n\nOpen the notebooks in JupyterLab (on 127.0.0.1):  make lab")
    return 1 if errors else 0


__all__ = ["DemoPaths", "agent_env_vars", "main", "paths_for", "replay_env", "repo_root"]
