"""The bundled per-step extensions (extensions/message_loop_prompts_after, message_loop_prompts_before) do
little when their inputs did not change, and see every change at the next step: the clock, the workdir,
the memory (created, filled, disabled mid-session)."""
from __future__ import annotations

import datetime as dt
import json
import importlib.util
from pathlib import Path
from typing import Any, Callable

import pytest

from a0nb import Agent
from a0nb.files.source_import import installed_spec
from a0nb.testing import answer, tool_reply

EXTENSIONS = Path(__file__).resolve().parents[2] / "extensions"


def _module(rel: str) -> Any:
    spec = installed_spec("bundled_" + Path(rel).stem, EXTENSIONS / rel)  # (as a0nb loads it: no cache written)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _extras(call: Any) -> dict[str, str]:
    return {p.label.split(": ", 1)[1]: p.text for p in call.parts if p.kind == "extras"}


def two_steps(nb: Path, change: Callable[[Agent], Any], **agent_args: Any) -> tuple[Any, Any, Agent]:
    """A turn's first and second call, with `change` run by a tool between them (after a warm-up turn)."""
    agent = Agent(nb, model=[tool_reply("change"), answer("done")] * 2, **agent_args)
    armed: list[bool] = []
    agent.register_tool(lambda: (change(agent) if armed else None) and "" or "changed", name="change")
    agent.ask("warm up")
    armed.append(True)
    first, second = agent.ask("go").calls
    return first, second, agent


# ---- the clock ----------------------------------------------------------------------------------------

class _Late(dt.datetime):
    def strftime(self, fmt: str) -> str:  # a clock with its own formatting keeps it
        return "late " + super().strftime(fmt)


@pytest.mark.parametrize("now", [
    dt.datetime(2026, 1, 31, 9, 30, 5), dt.datetime(2026, 12, 2, 23, 59, 59, 999999),
    dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59), dt.datetime(999, 3, 4, 5, 6, 7),
    dt.datetime(5, 1, 1), dt.datetime(2026, 6, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
    _Late(2026, 1, 2, 3, 4, 5),
])
def test_the_datetime_text_is_what_strftime_gives(now: dt.datetime) -> None:
    module = _module("message_loop_prompts_after/_60_include_current_datetime.py")
    assert module.stamp(now) == now.strftime("%Y-%m-%d %H:%M:%S")


def test_the_datetime_text_follows_each_new_time_asked_in_turn() -> None:
    """The last stamp is reused only for an equal time in the very same zone: a second later, the same instant
    in another zone (equal datetimes, other wall time), or a clock with its own formatting each get theirs."""
    module = _module("message_loop_prompts_after/_60_include_current_datetime.py")
    plus2, utc = dt.timezone(dt.timedelta(hours=2)), dt.timezone.utc
    times = [dt.datetime(2026, 1, 31, 9, 30, 5), dt.datetime(2026, 1, 31, 9, 30, 5), dt.datetime(2026, 1, 31, 9, 30, 6),
             dt.datetime(2026, 6, 1, 12, tzinfo=plus2), dt.datetime(2026, 6, 1, 10, tzinfo=utc),
             dt.datetime(2026, 6, 1, 10, tzinfo=utc), _Late(2026, 6, 1, 10, tzinfo=utc), dt.datetime(2026, 6, 1, 10)]
    for now in times:
        assert module.stamp(now) == now.strftime("%Y-%m-%d %H:%M:%S")


def test_the_next_step_sees_the_clock_move(nb: Path) -> None:
    first, second, _ = two_steps(nb, lambda a: a.configure(frozen_time="2030-05-06T07:08:09"),
                                 settings={"frozen_time": "2026-01-31T09:30:00"})
    assert "2026-01-31 09:30:00" in _extras(first)["current_datetime"]
    assert "2030-05-06 07:08:09" in _extras(second)["current_datetime"]


# ---- the workdir tree ---------------------------------------------------------------------------------

def _project_json(nb: Path, file_structure: dict[str, Any]) -> None:
    meta = nb / ".a0proj"
    meta.mkdir(exist_ok=True)
    (meta / "project.json").write_text(json.dumps({"file_structure": file_structure}))


@pytest.mark.parametrize("settings, seen", [
    ({"gitignore": ["*.csv"]}, lambda t: "data.csv" not in t and "*.csv" in t),
    ({"max_depth": 1}, lambda t: "deep.txt" not in t and "sub/" in t),
    ({"enabled": False}, lambda t: t is None),
])
def test_the_next_step_sees_the_file_structure_settings_change(nb: Path, settings: dict[str, Any],
                                                               seen: Callable[[str | None], bool]) -> None:
    (nb / "data.csv").write_text("a,b\n")
    (nb / "sub").mkdir()
    (nb / "sub" / "deep.txt").write_text("x")
    first, second, _ = two_steps(nb, lambda a: _project_json(nb, settings))
    before = _extras(first)["project_file_structure"]
    assert "data.csv" in before and "deep.txt" in before
    assert seen(_extras(second).get("project_file_structure"))
