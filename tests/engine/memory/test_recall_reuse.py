"""The per-step recall check is cheap (project.json read only when its stat changed), and every change is
seen at the next recall: a memory saved mid-turn, a knowledge file added, project.json switching to the
project's own memory (also when rewritten to the same size with its mtime put back), recall switched off (nothing new recalled)."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable

from a0nb import Agent
from a0nb.engine.memory.memories import memory_folder
from a0nb.testing import answer, tool_reply

HASH = {"embedding_model": "hash", "memory_recall_interval": 1, "memory_recall_threshold": 0.1}


def _memories(call: Any) -> str | None:
    return next((p.text for p in call.parts if p.label == "extras: memories"), None)


def two_steps(nb: Path, change: Callable[[Agent], Any], **settings: Any) -> tuple[Any, Any]:
    """A turn's first and second call with `change` run by a tool between them (after a warm-up turn)."""
    agent = Agent(nb, model=[tool_reply("change"), answer("done")] * 2, settings={**HASH, **settings})
    armed: list[bool] = []
    agent.register_tool(lambda: (change(agent) if armed else None) and "" or "changed", name="change")
    agent.ask("warm up: where do the otters sleep?")
    armed.append(True)
    first, second = agent.ask("where do the otters sleep?").calls
    return first, second


def test_a_memory_saved_mid_turn_is_recalled_at_the_next_step(nb: Path) -> None:
    from a0nb.engine.memory import memories_of
    first, second = two_steps(nb, lambda a: memories_of(a).save("The otters sleep in the boathouse."))
    assert _memories(first) is None
    assert "boathouse" in (_memories(second) or "")


def test_a_knowledge_file_added_mid_turn_is_recalled_at_the_next_step(nb: Path) -> None:
    def add(agent: Agent) -> None:
        (nb / ".a0proj" / "knowledge").mkdir(parents=True, exist_ok=True)
        (nb / ".a0proj" / "knowledge" / "otters.md").write_text("The otters sleep under the old bridge.")
    first, second = two_steps(nb, add)
    assert _memories(first) is None
    assert "old bridge" in (_memories(second) or "")


def test_project_memory_switched_on_mid_turn_is_used_at_the_next_step(nb: Path) -> None:
    Agent(nb, model=[tool_reply("memory_save", text="The otters sleep in the global barn."), answer("ok")],
          settings=HASH).ask("s")
    (nb / ".a0proj").mkdir(exist_ok=True)
    (nb / ".a0proj" / "project.json").write_text(json.dumps({"title": "P"}))

    def own(agent: Agent) -> None:
        (nb / ".a0proj" / "project.json").write_text(json.dumps({"title": "P", "memory": "own"}))
    first, second = two_steps(nb, own)
    assert "global barn" in (_memories(first) or "")
    assert _memories(second) is None  # the project's own memory is empty


def test_recall_switched_off_mid_turn_stops_at_the_next_step(nb: Path) -> None:
    """(What was recalled stays, as upstream's persistent extras do; nothing new is recalled.)"""
    from a0nb.engine.memory import memories_of
    Agent(nb, model=[tool_reply("memory_save", text="The otters sleep in the global barn."), answer("ok")],
          settings=HASH).ask("s")

    def off(agent: Agent) -> None:
        agent.configure(memory_recall=False)
        memories_of(agent).save("The otters sleep in the boathouse too.")
    first, second = two_steps(nb, off)
    assert "global barn" in (_memories(first) or "")
    assert _memories(second) == _memories(first)


def test_memory_folder_sees_project_json_rewritten_behind_an_old_mtime(tmp_path: Path) -> None:
    """Read once while unchanged; a rewrite of the same size whose mtime is put back is still seen (ctime)."""
    work, home = tmp_path / "w", tmp_path / "home"
    meta = work / ".a0proj"
    meta.mkdir(parents=True)
    project = meta / "project.json"
    project.write_text(json.dumps({"memory": "xxx"}))
    past = time.time() - 60
    os.utime(project, (past, past))
    assert memory_folder(work, home) == (home / "memory" / "default", False)
    assert memory_folder(work, home) == (home / "memory" / "default", False)  # (the kept answer)
    project.write_text(json.dumps({"memory": "own"}))  # the same size
    os.utime(project, (past, past))
    assert memory_folder(work, home) == (meta / "memory", True)
    project.unlink()
    assert memory_folder(work, home) == (home / "memory" / "default", False)
    project.write_text(json.dumps({"memory": "project"}))  # just written: read again until it is older
    assert memory_folder(work, home) == (meta / "memory", True)
    assert memory_folder(work, tmp_path / "other")[0] == meta / "memory"
    project.write_text("{}")
    assert memory_folder(work, tmp_path / "other") == (tmp_path / "other" / "memory" / "default", False)


def test_memory_folder_answers_each_workdir_and_home_asked_in_turn(tmp_path: Path) -> None:
    """The last (workdir, home) answer is reused only for those very Paths: alternating folders each get theirs."""
    one, two, home, other = tmp_path / "one", tmp_path / "two", tmp_path / "home", tmp_path / "other"
    for work in (one, two):
        (work / ".a0proj").mkdir(parents=True)
    (two / ".a0proj" / "project.json").write_text(json.dumps({"memory": "own"}))
    for _ in range(2):
        assert memory_folder(one, home) == (home / "memory" / "default", False)
        assert memory_folder(two, home) == (two / ".a0proj" / "memory", True)
        assert memory_folder(two, other) == (two / ".a0proj" / "memory", True)
        assert memory_folder(one, other) == (other / "memory" / "default", False)
        assert memory_folder(Path(str(one)), other) == (other / "memory" / "default", False)


def test_the_store_exists_once_its_file_does_and_follows_its_folder(tmp_path: Path) -> None:
    from a0nb.diagnostics import Diagnostics
    from a0nb.engine.memory.embeddings import HashEmbedder
    from a0nb.engine.memory.store import DB_NAME, MemoryStore

    store = MemoryStore(tmp_path / "a", HashEmbedder(), Diagnostics())
    assert not store.exists()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / DB_NAME).write_text("")
    assert store.exists() and store.path == tmp_path / "a" / DB_NAME
    store.folder = tmp_path / "b"
    assert not store.exists() and store.path == tmp_path / "b" / DB_NAME


def test_knowledge_folders_replaced_are_watched_at_the_next_sync(tmp_path: Path) -> None:
    from a0nb.diagnostics import Diagnostics
    from a0nb.engine.memory.embeddings import HashEmbedder
    from a0nb.engine.memory.memories import Memories

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x.md").write_text("The otters sleep in the boathouse.")
    memories = Memories(tmp_path / "mem", [(a, "a")], HashEmbedder(), Diagnostics())
    assert memories.sync() is not None and memories.sync() is None  # (imported, then nothing changed)
    memories.knowledge = ((b, "b"),)
    (b / "y.md").write_text("The otters sleep under the old bridge.")
    assert memories.sync() is not None
    assert [m.text for m in memories.search("old bridge", threshold=0.1)][0].endswith("old bridge.")
