"""Golden trajectories: scripted replies → tool sequence, extras keys per call, final text.
Regenerate with `A0NB_REGEN_GOLDEN=1 pytest tests/engine/test_golden.py`."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from a0nb import Agent

HERE = Path(__file__).parent / "golden"
SCENARIOS = sorted(HERE.glob("*.yaml"))


def trajectory(scenario: Path, nb: Path) -> dict[str, object]:
    spec = yaml.safe_load(scenario.read_text())
    agent = Agent(nb, model=spec["replies"])
    agent.extensions.stats.trace = []
    turn = agent.ask(spec["ask"])
    return {
        "final_text": turn.text,
        "calls": [{
            "tool": c.tool_request["tool_name"] if c.tool_request else None,
            "extras": [p.label.split(": ", 1)[1] + f" <- {p.extension}" for p in c.parts if p.kind == "extras"],
            "system_sections": [p.label for p in c.parts if p.kind == "system"],
            "history": [p.label for p in c.parts if p.kind == "history"],
        } for c in turn.calls],
        "points": _one_per_run(agent.extensions.stats.trace, "tool_output_update"),
    }


def _one_per_run(points: list[str], live: str) -> list[str]:
    """How many live output updates a run sends depends on how the OS splits its output into reads and on the
    clock (at most one per PROGRESS_EVERY); the trajectory pins that they happen, not how many."""
    return [p for i, p in enumerate(points) if not (p == live and i and points[i - 1] == live)]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.stem for s in SCENARIOS])
def test_golden_trajectory(scenario: Path, nb: Path) -> None:
    got = trajectory(scenario, nb)
    expected_file = scenario.with_suffix(".expected.json")
    if os.environ.get("A0NB_REGEN_GOLDEN") or not expected_file.exists():
        expected_file.write_text(json.dumps(got, indent=1) + "\n")
    assert got == json.loads(expected_file.read_text())
