"""Memory through the agent: the four tools with Agent Zero's arguments, recall into extras with
provenance on upstream's schedule, knowledge import, project memory, memorising, failures."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from a0nb import Agent
from a0nb.testing import answer, tool_reply

HASH = {"embedding_model": "hash"}


def _results(turn) -> list[str]:
    return [c.tool_result for c in turn.calls if c.tool_result is not None and c.tool_request["tool_name"] != "response"]


def test_save_load_delete_forget_through_the_loop(nb: Path) -> None:
    agent = Agent(nb, model=[
        tool_reply("memory_save", text="The user's favourite editor is Helix.", area="main", topic="tools"),
        tool_reply("memory_save", text="Backups run nightly at 02:00.", area="solutions"),
        tool_reply("memory_save", text="x", area="instruments"),
        tool_reply("memory_load", query="favourite editor", threshold=0.1, limit=1, filter="topic == 'tools'"),
        tool_reply("memory_load", query="favourite editor", threshold=0.1, filter="topic =="),
        answer("saved")], settings=HASH)
    turn = agent.ask("remember things")
    saved, solution, bad_area, loaded, bad_filter = _results(turn)
    memory_id = saved.split("id ")[1].split(" ")[0]
    assert saved == f"Memory saved with id {memory_id} (area main)."
    assert "unknown area 'instruments'" in bad_area
    assert loaded.startswith(f"[id {memory_id}, area main, score ") and "Helix" in loaded
    assert "memory_load failed" in bad_filter and "not a valid condition" in bad_filter
    sol_id = solution.split("id ")[1].split(" ")[0]
    agent.configure(model=[tool_reply("memory_delete", ids=f"{sol_id}, missing"),
                           tool_reply("memory_forget", query="The user's favourite editor is Helix.", threshold=0.9),
                           tool_reply("memory_load", query="editor", threshold=0.0), answer("gone")])
    deleted, forgotten, empty = _results(agent.ask("clean up"))
    assert deleted == f"Memories deleted: 1 ({sol_id})."
    assert forgotten == f"Memories deleted: 1 ({memory_id})."
    assert empty.startswith('No memories found for the query "editor"')


def test_memory_is_global_by_default_and_per_project_when_asked(nb: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    Agent(nb, model=[tool_reply("memory_save", text="global fact about zebras"), answer("ok")], settings=HASH).ask("s")
    seen = Agent(other, model=[tool_reply("memory_load", query="zebras", threshold=0.2), answer("ok")], settings=HASH)
    assert "zebras" in _results(seen.ask("l"))[0]
    proj = tmp_path / "proj"
    (proj / ".a0proj").mkdir(parents=True)
    (proj / ".a0proj" / "project.json").write_text(json.dumps({"title": "P", "memory": "own"}))
    own = Agent(proj, model=[tool_reply("memory_load", query="zebras", threshold=0.2),
                             tool_reply("memory_save", text="project fact about llamas"), answer("ok")], settings=HASH)
    result = _results(own.ask("l"))
    assert result[0].startswith("No memories found") and (proj / ".a0proj" / "memory" / "memory.sqlite").is_file()
    again = Agent(nb, model=[tool_reply("memory_load", query="llamas", threshold=0.2), answer("ok")], settings=HASH)
    assert _results(again.ask("l"))[0].startswith("No memories found")


def test_recall_puts_knowledge_into_extras_with_provenance_on_schedule(nb: Path) -> None:
    kn = nb / ".a0proj" / "knowledge"
    kn.mkdir(parents=True)
    (kn / "deploy.md").write_text("Deployments to production happen with `make ship` and need two approvals.")
    (kn / "solutions").mkdir()
    (kn / "solutions" / "ssl.md").write_text("Deployments failing with SSL errors: renew the certificate first.")
    replies = [tool_reply("memory_load", query=f"x{i}", threshold=0.99) for i in range(4)] + [answer("done")]
    agent = Agent(nb, model=replies, settings={**HASH, "memory_recall_interval": 3,
                                                        "memory_recall_threshold": 0.2})
    turn = agent.ask("How do deployments to production work?")
    first = turn.calls[0]
    extras = {p.label: p for p in first.parts if p.kind == "extras"}
    memories = extras["extras: memories"]
    assert "source .a0proj/knowledge/deploy.md" in memories.text and "area main, score" in memories.text
    assert "make ship" in memories.text and "_50_recall_memories" in memories.source
    assert "source .a0proj/knowledge/solutions/ssl.md" in extras["extras: solutions"].text
    assert "area solutions" in extras["extras: solutions"].text
    # persistent: kept on passes 1 and 2, recomputed on pass 3 (0, 3, 6 ... as upstream)
    for call in turn.calls[1:3]:
        assert [p.text for p in call.parts if p.label == "extras: memories"] == [memories.text]


def test_no_recall_without_memories_and_when_switched_off(nb: Path) -> None:
    agent = Agent(nb, model=[answer("a")], settings=HASH)
    turn = agent.ask("anything")
    assert not [p for p in turn.calls[0].parts if p.label == "extras: memories"]
    import os
    assert not list(Path(os.environ["A0NB_HOME"]).glob("**/memory.sqlite"))  # nothing created for an empty memory
    Agent(nb, model=[tool_reply("memory_save", text="anything goes here"), answer("ok")], settings=HASH).ask("s")
    off = Agent(nb, model=[answer("a")], settings={**HASH, "memory_recall": False, "memory_recall_threshold": 0})
    assert not [p for p in off.ask("anything goes").calls[0].parts if p.label == "extras: memories"]


def test_failing_embedder_is_reported_and_the_loop_goes_on(nb: Path, monkeypatch) -> None:
    import a0nb.providers.litellm_provider as lp

    def refuse(model, texts, api_base=None):
        raise ConnectionError("embedding endpoint unreachable")
    monkeypatch.setattr(lp, "embed", refuse)
    Agent(nb, model=[tool_reply("memory_save", text="something to recall"), answer("ok")], settings=HASH).ask("s")
    agent = Agent(nb, model=[tool_reply("memory_load", query="something"), answer("still answered")],
                  settings={"embedding_model": "openai/no-such-embedding-model"})
    turn = agent.ask("something to recall?")
    assert turn.text == "still answered"
    assert "memory_load failed" in turn.calls[0].tool_result
    [diag] = [d for d in agent.diagnostics if d.area == "memory"]
    assert "recall failed, the turn goes on" in diag.message and "unreachable" in diag.message


def test_memorize_fragments_and_solutions_with_the_utility_model(nb: Path) -> None:
    (nb / "util.yaml").write_text(yaml.safe_dump([
        json.dumps(["The user's cluster is called orion."]),
        json.dumps([{"problem": "pip cannot reach the index", "solution": "set PIP_INDEX_URL to the mirror"}])]))
    agent = Agent(nb, model=[answer("noted")], utility_model="scripted:util.yaml",
                  settings={**HASH, "memory_memorize": True})
    agent.ask("my cluster is orion; pip works after setting PIP_INDEX_URL")
    utility = [c for c in agent.calls if c.role == "utility"]
    assert [c.purpose for c in utility] == ["memorize fragments", "memorize solutions"]
    from a0nb.engine.memory import memories_of
    stored = {m.area: m.text for m in memories_of(agent).store.all()}
    assert stored["fragments"] == "The user's cluster is called orion."
    assert stored["solutions"].startswith("# Problem\npip cannot reach the index\n# Solution\nset PIP_INDEX_URL")


def test_memorize_is_off_by_default(nb: Path) -> None:
    (nb / "util.yaml").write_text(yaml.safe_dump(["[]"]))
    agent = Agent(nb, model=[answer("noted")], utility_model="scripted:util.yaml", settings=HASH)
    agent.ask("hello there")
    assert not [c for c in agent.calls if c.role == "utility"]


def test_embedding_model_change_fires_the_point_and_reindexes(nb: Path) -> None:
    cfg = nb / ".a0proj" / "plugins" / "_model_config"
    cfg.mkdir(parents=True)
    (cfg / "config.json").write_text(json.dumps({"embedding_model": "hash-256"}))  # the _model_config layer
    Agent(nb, model=[tool_reply("memory_save", text="The backup disk is called Attic."), answer("ok")]).ask("s")
    (cfg / "config.json").write_text(json.dumps({"embedding_model": "hash-512"}))
    agent = Agent(nb, model=[tool_reply("memory_load", query="backup disk name", threshold=0.2), answer("ok")])
    seen = []
    agent.register_extension("embedding_model_changed", lambda old=None, new=None, folder=None, **kw:
                             seen.append((old, new)))
    assert "Attic" in _results(agent.ask("what is the backup disk called?"))[0]
    assert seen == [("hash-256", "hash-512")]


def test_a_corrupt_project_memory_is_rebuilt_from_the_knowledge_files(nb: Path) -> None:
    """The project's database is garbage: it is set aside (kept), a new one is filled from the knowledge files,
    recall works in the same ask, a diagnostic says what happened, and the global memory is untouched."""
    Agent(nb, model=[tool_reply("memory_save", text="global note about otters"), answer("ok")], settings=HASH).ask("s")
    proj = nb / "proj"
    (proj / ".a0proj" / "knowledge").mkdir(parents=True)
    (proj / ".a0proj" / "project.json").write_text(json.dumps({"title": "P", "memory": "own"}))
    (proj / ".a0proj" / "knowledge" / "ports.md").write_text("The staging database listens on port 6543.")
    (proj / ".a0proj" / "memory").mkdir()
    (proj / ".a0proj" / "memory" / "memory.sqlite").write_bytes(b"garbage, not a database " * 50)
    agent = Agent(proj, model=[answer("6543")], settings={**HASH, "memory_recall_threshold": 0.1})
    turn = agent.ask("which port does the staging database listen on?")
    recalled = [p.text for p in turn.calls[0].parts if p.label == "extras: memories"]
    assert recalled and "source .a0proj/knowledge/ports.md" in recalled[0] and "6543" in recalled[0]
    [diag] = [d for d in agent.diagnostics if d.area == "memory" and "unreadable" in d.message]
    assert "memory.sqlite.corrupt-1" in diag.message and "knowledge files are imported again" in diag.message
    assert (proj / ".a0proj" / "memory" / "memory.sqlite.corrupt-1").read_bytes().startswith(b"garbage")
    home = Agent(nb, model=[tool_reply("memory_load", query="otters", threshold=0.2), answer("ok")], settings=HASH)
    assert "otters" in _results(home.ask("l"))[0]
