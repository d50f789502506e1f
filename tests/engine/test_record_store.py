"""Call records over a long session: a finished record shares unchanged messages and parts with the one
before it yet equals, value for value, what it held when it was made; spilled records are read back from
the trace file whole, and the inspector shows a spilled call exactly as before."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from a0nb import Agent
from a0nb.engine.records import CallRecord, Part, import_jsonl
from a0nb.errors import A0Error
from a0nb.inspector import render_call, render_turn
from a0nb.testing import answer, tool_reply

STEPS = 6


def _agent(folder: Path, asks: int = 2) -> tuple[Agent, list[dict[str, Any]]]:
    replies: list[str] = []
    for a in range(asks):
        replies += [tool_reply("noop", i=i) for i in range(STEPS - 1)] + [answer(f"done {a}")]
    agent = Agent(folder, model=replies)
    agent.register_tool(lambda i=0: f"ok {i}", name="noop")
    made: list[dict[str, Any]] = []  # each record as it was when recorded, before any sharing or spilling
    agent.register_extension("call_recorded", lambda record: made.append(json.loads(json.dumps(record.to_dict()))),
                             name="snapshot")
    return agent, made


def _fresh(d: dict[str, Any]) -> CallRecord:
    return CallRecord.from_dict(d)


def test_shared_records_equal_their_state_when_made(tmp_path: Path) -> None:
    agent, made = _agent(tmp_path)
    agent.ask("first")
    agent.ask("second")
    records = agent.models.records
    assert len(records) == len(made) == 2 * STEPS
    for record, snapshot in zip(records, made):
        assert record == _fresh(snapshot)
    # the unchanged history is one object in consecutive records, not a copy per step
    a, b = records[-2], records[-1]
    assert len(b.messages) > len(a.messages) > 2
    assert all(x is y for x, y in zip(a.messages[:-1], b.messages[:-1]))
    system = [p for p in b.parts if p.kind == "system"]
    assert system and all(p is q for p, q in zip([p for p in a.parts if p.kind == "system"], system))


def test_a_changed_message_is_not_shared(tmp_path: Path) -> None:
    agent, made = _agent(tmp_path, asks=1)
    agent.register_extension("chat_model_call_before",
                             lambda call_data: call_data["messages"][1].update(content=f"edited {len(made)}"),
                             name="edit")
    agent.ask("go")
    records = agent.models.records
    for record, snapshot in zip(records, made):
        assert record == _fresh(snapshot)
    assert records[-1].messages[1] is not records[-2].messages[1]


def test_edits_to_handed_out_messages_at_any_later_step_reach_no_record(tmp_path: Path) -> None:
    """The messages of unchanged history are handed out again step after step (not copied each time):
    edits a caller makes to them, during the call or after it through a list it kept, reach no finished
    record and no later request."""
    agent, made = _agent(tmp_path, asks=1)
    kept: list[list[dict[str, Any]]] = []

    def edit(call_data: dict[str, Any]) -> None:
        messages = call_data["messages"]
        assert all("edited" not in str(m["content"]) and "extra" not in m for m in messages)
        kept.append(messages)
        messages[-1]["content"] = "edited now"

    def edit_later() -> None:  # after the call: every list kept so far, every message in it
        for earlier in kept:
            for m in earlier[1:]:
                m["content"] = f"edited later {len(kept)}"
                m["extra"] = 1

    agent.register_extension("chat_model_call_before", edit, name="edit")
    agent.register_extension("message_loop_end", edit_later, name="edit_later")
    agent.ask("go")
    records = agent.models.records
    assert len(records) == STEPS and len(kept) == STEPS
    for record, snapshot in zip(records, made):
        assert record == _fresh(snapshot)
        assert record.messages[-1]["content"] == "edited now"  # the record holds the request as sent
        assert all("edited later" not in str(m) for m in record.messages)


def test_an_edit_made_after_a_call_through_a_reference_then_dropped_reaches_no_later_request(tmp_path: Path) -> None:
    """A caller that kept the handed-out messages, edits them after the call is finished and lets them go before
    the next call (nothing holds them any more when it is built): the next request and every record still hold
    the messages as converted. (A check of who still holds the messages cannot see such an edit: only a
    comparison at the next call can.)"""
    agent, made = _agent(tmp_path, asks=1)
    kept: list[list[dict[str, Any]]] = []
    seen: list[list[dict[str, Any]]] = []

    def keep(call_data: dict[str, Any]) -> None:
        seen.append(json.loads(json.dumps(call_data["messages"])))
        kept.append(call_data["messages"])

    def edit_and_drop() -> None:
        for m in kept.pop()[1:]:
            m["content"] = "edited after the call"
            m["extra"] = 1

    agent.register_extension("chat_model_call_before", keep, name="keep")
    agent.register_extension("message_loop_end", edit_and_drop, name="edit_and_drop")
    agent.ask("go")
    records = agent.models.records
    assert len(records) == len(seen) == STEPS and not kept
    for record, snapshot, request in zip(records, made, seen):
        assert record == _fresh(snapshot)
        assert record.messages == request
        assert all("edited after" not in str(m) and "extra" not in m for m in request)


def test_records_equal_their_state_when_the_system_prompt_changes_at_some_steps(tmp_path: Path) -> None:
    agent, made = _agent(tmp_path)
    seen: list[int] = []

    def system(system_prompt: list[str], **kwargs: Any) -> None:  # changes at every third step
        seen.append(1)
        system_prompt.append(f"phase {len(seen) // 3}")

    agent.register_extension("system_prompt", system, name="phase")
    agent.ask("first")
    agent.ask("second")
    records = agent.models.records
    assert len({r.messages[0]["content"] for r in records}) > 2
    for record, snapshot in zip(records, made):
        assert record == _fresh(snapshot)
    a, b = records[-2], records[-1]
    assert all(x is y for x, y in zip(a.messages[1:-1], b.messages[1:-1]))


def test_records_equal_their_state_when_the_number_of_system_sections_changes(tmp_path: Path) -> None:
    """The store remembers how many system parts lead the last record's parts: a step with a section more or
    fewer (added, then dropped again) counts them anew and shares only equal parts."""
    agent, made = _agent(tmp_path)
    seen: list[int] = []

    def system(system_prompt: list[str], **kwargs: Any) -> None:  # a second section at every other step
        seen.append(1)
        system_prompt.append("always")
        if len(seen) % 2:
            system_prompt.append(f"sometimes {len(seen) // 4}")

    agent.register_extension("system_prompt", system, name="sections")
    heads: list[tuple[Any, Any]] = []  # (the store's count for the last record, that record) at each call
    agent.register_extension("call_recorded", lambda record: heads.append((agent.models.store._head,
                                                                           agent.models.store.previous)), name="heads")
    agent.ask("first")
    agent.ask("second")
    records = agent.models.records
    counts = [sum(p.kind == "system" for p in r.parts) for r in records]
    assert len(set(counts)) == 2
    assert [head for head, previous in heads if previous is not None] == \
        [counts[records.index(previous)] for head, previous in heads if previous is not None]
    for record, snapshot in zip(records, made):
        assert record == _fresh(snapshot)
    for a, b in zip(records, records[1:]):  # equal system parts are one object, others are not mixed up
        for p in b.parts:
            if p.kind == "system":
                same = [q for q in a.parts if q.kind == "system" and q.label == p.label]
                assert not same or (p is same[0]) == (p == same[0])


def test_masked_parts_equal_to_the_last_records_are_shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "tok-Shared-9921zz"
    monkeypatch.setenv("ACME_API_KEY", token)
    agent, made = _agent(tmp_path, asks=1)
    agent.register_extension("system_prompt", lambda system_prompt, **kw: system_prompt.append(f"key {token}"),
                             name="leaky")
    agent.ask("go")
    records = agent.models.records
    for record, snapshot in zip(records, made):
        assert record == _fresh(snapshot)
        assert token not in json.dumps(record.to_dict())
    leaky = [next(p for p in r.parts if p.kind == "system" and p.extension == "leaky") for r in records]
    assert all(p is leaky[0] for p in leaky)  # masked afresh at each step, held once


def test_a_secret_set_mid_turn_is_masked_in_every_part_of_the_next_request(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts unchanged since the last request keep their masked form only under the same secret set."""
    token = "tok-Later-5510qq"
    agent, _ = _agent(tmp_path, asks=1)
    steps: list[int] = []

    def step(**kwargs: Any) -> None:
        steps.append(1)
        if len(steps) == 3:
            monkeypatch.setenv("ACME_API_KEY", token)

    agent.register_extension("message_loop_start", step, name="later")
    agent.ask(f"remember {token} please")  # in the history (and its parts) from the first request on
    records = agent.models.records
    assert any(token in p.text for p in records[0].parts)
    for record in records[3:]:
        assert not any(token in p.text for p in record.parts) and token not in json.dumps(record.messages)
        assert any("ACME_API_KEY" in p.text for p in record.parts if p.kind == "history")


def test_masked_parts_are_reused_only_under_the_same_secret_set(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    token = "tok-Reuse-7781pp"
    agent, _ = _agent(tmp_path, asks=1)
    parts = [Part("history", f"history: {i}", f"text {i} {token}", 3, i) for i in range(5)]
    messages = [{"role": "user", "content": p.text} for p in parts]
    monkeypatch.setenv("ACME_OTHER_KEY", "tok-Other-1200aa")
    assert agent.models.masked(messages, parts)[1] == parts  # a secret set without this token
    monkeypatch.setenv("ACME_API_KEY", token)
    sent, masked = agent.models.masked(messages, parts)  # the same parts, a new secret set
    assert not any(token in p.text for p in masked) and token not in json.dumps(sent)
    again = agent.models.masked(messages, parts + [Part("history", "history: 5", token, 1, 5)])[1]
    assert again[:5] == masked and all(a is b for a, b in zip(again, masked))  # reused under the same set
    assert token not in again[5].text


def test_spilled_records_read_back_whole(tmp_path: Path) -> None:
    agent, made = _agent(tmp_path)
    trace = tmp_path / "trace" / "calls.jsonl"
    spill = agent.models.store.spill_to(trace, keep=3)
    agent.ask("first")
    agent.ask("second")
    records = agent.models.records
    on_disk = lambda r: r.__dict__.get("_fields_from", (None,))[0] is spill
    in_memory = [r for r in records if not on_disk(r)]
    assert len(in_memory) == 3 and spill.spilled == len(records) - 3
    for record, snapshot in zip(records, made):
        assert record == _fresh(snapshot)
        assert json.loads(json.dumps(record.to_dict())) == snapshot
    # the trace file is a complete export of the spilled records
    assert [json.loads(json.dumps(r.to_dict())) for r in import_jsonl(trace)] == made[:-3]
    # the inspector shows a spilled call (and a turn of spilled calls) exactly as one held in memory
    oldest = records[0]
    assert on_disk(oldest)
    assert render_call(oldest, folder=tmp_path).html == render_call(_fresh(made[0]), folder=tmp_path).html
    turn = agent.turns[0]
    assert render_turn(turn, folder=tmp_path).html
    spill.flush()
    assert all(on_disk(r) for r in records)
    assert records[-1] == _fresh(made[-1])


def test_spill_keeps_a_record_json_cannot_hold(tmp_path: Path) -> None:
    agent, _ = _agent(tmp_path, asks=1)
    agent.extensions.unregister("call_recorded", "snapshot")
    spill = agent.models.store.spill_to(tmp_path / "calls.jsonl", keep=1)
    agent.register_extension("chat_model_call_before",
                             lambda call_data: call_data["messages"].append({"role": "user", "content": b"raw"}),
                             name="bytes")
    agent.ask("go")
    assert spill.spilled == 0  # bytes would come back as text: those records stay in memory, whole
    assert all(r.messages[-1]["content"] == b"raw" for r in agent.models.records)


def test_spill_needs_one_record_kept(tmp_path: Path) -> None:
    agent, _ = _agent(tmp_path, asks=1)
    with pytest.raises(A0Error, match="keep >= 1"):
        agent.models.store.spill_to(tmp_path / "calls.jsonl", keep=0)


def test_a_missing_trace_file_is_named(tmp_path: Path) -> None:
    agent, _ = _agent(tmp_path, asks=1)
    trace = tmp_path / "calls.jsonl"
    agent.models.store.spill_to(trace, keep=1)
    agent.ask("go")
    trace.unlink()
    with pytest.raises(A0Error, match="calls.jsonl"):
        agent.models.records[0].messages


def test_records_held_by_reference_equal_their_state_when_made(tmp_path: Path) -> None:
    agent, made = _agent(tmp_path, asks=7)  # 42 records: more than one run between two whole records
    for a in range(7):
        agent.ask(f"ask {a}")
    records = agent.models.records
    held = [r for r in records if "messages" not in r.__dict__]
    assert len(held) > len(records) // 2  # most records hold their lists as the one before plus what changed
    for record, snapshot in reversed(list(zip(records, made))):  # (newest first: the longest walks back)
        assert record == _fresh(snapshot)
        assert json.loads(json.dumps(record.to_dict())) == snapshot
    for i in (1, 20, len(records) - 2):
        assert "messages" not in records[i].__dict__
        assert render_call(records[i], folder=tmp_path).html == render_call(_fresh(made[i]), folder=tmp_path).html


def test_record_keep_setting_spills_to_a_trace_and_the_inspector_shows_spilled_calls(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("A0NB_HOME", str(home))
    monkeypatch.setenv("A0NB_RECORD_KEEP", "4")
    folder = tmp_path / "nb"
    folder.mkdir()
    agent, made = _agent(folder, asks=4)
    assert agent.settings.record_keep == 4
    agent.ask("first")
    agent.ask("second")
    records = agent.models.records
    spill = agent.models.store.spill
    assert spill is not None and spill.path.parent == home / "traces" and spill.spilled == len(records) - 4
    for record, snapshot in zip(records, made):
        assert record == _fresh(snapshot)
    assert render_call(records[0], folder=folder).html == render_call(_fresh(made[0]), folder=folder).html
    assert render_turn(agent.turns[0], folder=folder).html
    # a smaller keep spills more at the next step; 0 stops spilling (what was spilled stays readable)
    agent.configure(record_keep=1)
    agent.ask("third")
    assert spill.spilled == len(agent.models.records) - 1
    agent.configure(record_keep=0)
    agent.ask("fourth")
    assert agent.models.store.spill is None and spill.spilled == len(agent.models.records) - STEPS - 1
    assert agent.models.records[0] == _fresh(made[0])


def test_record_keep_is_validated(tmp_path: Path, monkeypatch) -> None:
    from a0nb.errors import ConfigError
    monkeypatch.setenv("A0NB_RECORD_KEEP", "-1")
    with pytest.raises(ConfigError, match="record_keep"):
        Agent(tmp_path, model=[answer("x")]).settings
