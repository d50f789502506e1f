"""The resolved extension chains are cached per point until something they came from changes: a file added,
edited in place or deleted between two steps of one turn, a new point folder, an `@extensible` function's
first extension, or a registration from Python. Each test changes one of them mid-session through the
public interface (a tool the scripted model calls) and checks the next step runs what is now on disk (from
the step's stat check, at the top of prepare_prompt: message_loop_prompts_after is the first point after it)."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

from a0nb import Agent, extensible
from a0nb.testing import answer, tool_reply

LOG = """from a0nb import Extension
class Log(Extension):
    def execute(self, loop_data=None, **kwargs):
        self.agent.data.setdefault("log", []).append(("{tag}", loop_data.iteration + 1))
"""


def _age(*paths: Path) -> None:
    """As a notebook folder a user works in: nothing in it changed in the last minute."""
    old = time.time() - 60
    for p in paths:
        for d in [p, *p.rglob("*")]:
            os.utime(d, (old, old))


def _write(path: Path, tag: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(LOG.format(tag=tag))


def _turn(nb: Path, change: Callable[[int], None], steps: int = 3) -> tuple[Agent, list[tuple[str, int]]]:
    """A turn of `steps` loop passes; between pass i and i+1 the tool `change(i)` runs."""
    replies = [tool_reply("change", step=i) for i in range(1, steps)] + [answer("done")]
    agent = Agent(nb, model=replies)

    def change_tool(step: int = 0) -> str:
        change(step)
        return "changed"

    agent.register_tool(change_tool, name="change")
    turn = agent.ask("go")
    assert turn.text == "done", turn.error
    return agent, agent.data.get("log", [])


def test_a_file_added_mid_turn_runs_from_the_next_step(nb: Path) -> None:
    folder = nb / "extensions" / "message_loop_prompts_after"
    _write(folder / "_10_first.py", "first")
    _age(nb)

    def change(step: int) -> None:
        if step == 1:
            _write(folder / "_20_added.py", "added")

    _, log = _turn(nb, change)
    assert log == [("first", 1), ("first", 2), ("added", 2), ("first", 3), ("added", 3)]


def test_a_file_deleted_mid_turn_stops_at_the_next_step(nb: Path) -> None:
    folder = nb / "extensions" / "message_loop_prompts_after"
    _write(folder / "_10_first.py", "first")
    _write(folder / "_20_gone.py", "gone")
    _age(nb)

    def change(step: int) -> None:
        if step == 1:
            (folder / "_20_gone.py").unlink()

    _, log = _turn(nb, change)
    assert log == [("first", 1), ("gone", 1), ("first", 2), ("first", 3)]


def test_a_file_edited_in_place_runs_its_new_code_at_the_next_step(nb: Path) -> None:
    # the folder's mtime does not change when a file in it is rewritten: the file's own stat must tell
    path = nb / "extensions" / "message_loop_prompts_after" / "_10_edit.py"
    _write(path, "old")
    _age(nb)

    def change(step: int) -> None:
        if step == 1:
            _write(path, "new")  # same length
            os.utime(path, ns=(time.time_ns(), time.time_ns() + 10_000_000))

    _, log = _turn(nb, change)
    assert log == [("old", 1), ("new", 2), ("new", 3)]


def test_a_new_point_folder_and_the_upstream_spelling_are_seen(nb: Path) -> None:
    (nb / "extensions").mkdir()
    _age(nb)

    def change(step: int) -> None:
        if step == 1:
            _write(nb / "extensions" / "message_loop_prompts_after" / "_10_plain.py", "plain")
        if step == 2:  # Agent Zero's spelling, a new folder under an existing one
            _write(nb / "extensions" / "python" / "message_loop_prompts_after" / "_20_upstream.py", "upstream")

    _, log = _turn(nb, change)
    assert log == [("plain", 2), ("plain", 3), ("upstream", 3)]


def test_an_override_added_mid_turn_replaces_the_lower_copy(nb: Path, tmp_path: Path) -> None:
    # a same-named file in a higher root (the notebook's profile) overrides the notebook's copy from the next step
    _write(nb / "extensions" / "message_loop_prompts_after" / "_10_same.py", "notebook")
    _age(nb)

    def change(step: int) -> None:
        if step == 1:
            _write(nb / "agents" / "default" / "extensions" / "message_loop_prompts_after" / "_10_same.py", "profile")

    agent, log = _turn(nb, change)
    assert log == [("notebook", 1), ("profile", 2), ("profile", 3)]
    info = agent.extensions.resolve("message_loop_prompts_after")
    assert [i.root_label for i in info if i.name == "_10_same"] == ["notebook-profile"]


def test_registrations_after_a_turn_run_at_the_next_fire(nb: Path) -> None:
    seen: list[str] = []
    agent = Agent(nb, model=[answer("a"), answer("b"), answer("c"), answer("d")])
    agent.ask("first")  # every chain of the loop is resolved and cached
    agent.register_extension("message_loop_prompts_after", lambda: seen.append("registered"), name="spy")
    agent.ask("second")
    assert seen == ["registered"]
    agent.extensions.unregister("message_loop_prompts_after", "spy")
    agent.ask("third")
    agent.register_extension("message_loop_prompts_after", lambda: seen.append("again"), name="spy")
    agent.extensions.registered.clear()  # straight on the mapping, as a notebook might
    agent.ask("fourth")
    assert seen == ["registered"]


def test_a_registration_mid_turn_runs_from_the_next_step(nb: Path) -> None:
    seen: list[int] = []
    agent: Agent | None = None

    def change(step: int) -> None:
        assert agent is not None
        if step == 1:
            agent.register_extension("message_loop_prompts_after", lambda loop_data: seen.append(loop_data.iteration + 1),
                                     name="late")
        if step == 2:
            agent.register_extension("message_loop_prompts_after", lambda loop_data: seen.append(-loop_data.iteration - 1),
                                     name="late")  # the same name again: the new function replaces the old

    replies = [tool_reply("change", step=i) for i in (1, 2)] + [answer("done")]
    agent = Agent(nb, model=replies)
    agent.register_tool(lambda step=0: change(step) or "ok", name="change")
    assert agent.ask("go").text == "done"
    assert seen == [2, -3]


class _Host:
    def __init__(self, agent: Agent) -> None:
        self.extensions = agent.extensions

    @extensible
    def double(self, value: int) -> int:
        return value * 2


def test_an_extensible_functions_first_extension_is_seen_after_the_next_refresh(nb: Path) -> None:
    (nb / "extensions").mkdir()
    _age(nb)
    agent = Agent(nb, model=[answer("ok")])
    host = _Host(agent)
    assert host.double(2) == 4  # no extension: cached as such
    point = getattr(_Host.double, "__a0_point__")
    start = nb.joinpath("extensions", *point.split("/"), "start")
    start.mkdir(parents=True)
    (start / "_10_ten.py").write_text("from a0nb import Extension\nclass T(Extension):\n"
                                      "    def execute(self, data=None, **kw): data['args'] = (data['args'][0], 10)\n")
    agent.refresh()  # what every loop step does first
    assert host.double(2) == 20
    (start / "_10_ten.py").unlink()
    agent.refresh()
    assert host.double(2) == 4
    agent.register_extension(point + "/end", lambda data: data.update(result=-1), name="neg")
    assert host.double(2) == -1


def test_an_unchanged_step_stats_few_paths_and_runs_the_cached_chain(nb: Path) -> None:
    _write(nb / "extensions" / "message_loop_prompts_after" / "_10_first.py", "first")
    _age(nb)
    agent = Agent(nb, model=[answer("ok")])
    agent.ask("warm")
    generation = agent.hierarchy.generation
    chain: Any = agent.extensions.resolve("message_loop_prompts_after")
    agent.refresh()
    assert agent.hierarchy.generation == generation
    assert agent.extensions.resolve("message_loop_prompts_after") is chain  # not rebuilt
    assert len(agent.hierarchy._probe) < len(agent.hierarchy._watch or []) // 2
