"""Cassettes: record -> replay round trips (YAML and JSONL, scripted and litellm inner models), strict
misses explained by a diff, lax order, fingerprint normalisation, and secrets never reaching the file."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from a0nb.errors import ConfigError, ModelError
from a0nb.providers.base import ModelConfig, ModelReply
from a0nb.providers.extension import provider_tags
from a0nb.providers.stream import complete
from a0nb.providers.cassette import (Masker, RecordingProvider, ReplayProvider, append_entry, cassette_provider,
                                     fingerprint, load_cassette, normalise_request, save_cassette)
from a0nb.providers.registry import make_provider

SYSTEM = "You are a0.\nCurrent datetime: 2026-01-31 09:30:00"
REPLIES = [
    {"content": "<think>plan the answer</think>{\"tool_name\": \"response\", \"tool_args\": {\"text\": \"4\"}}"},
    {"content": "line one\nline two\n  indented line three", "usage": {"prompt_tokens": 5, "completion_tokens": 9}},
    "third reply",
]


def _messages(user: str, system: str = SYSTEM) -> list[dict[str, Any]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _call(provider: Any, messages: list[dict[str, Any]], **params: Any) -> ModelReply:
    config = ModelConfig(spec="test", params=params, retries=0)
    return asyncio.run(complete(provider, messages, config))


def _script(folder: Path, replies: list[Any] = REPLIES) -> None:
    (folder / "replies.yaml").write_text(yaml.safe_dump(replies), encoding="utf-8")


def _shape(reply: ModelReply) -> tuple[Any, ...]:
    return reply.content, reply.reasoning, reply.tool_calls, reply.usage


QUESTIONS = ["What is 2+2?", "Write two lines.", "And a third?"]


@pytest.mark.parametrize("name", ["calls.yaml", "calls.yml", "calls.jsonl"])
def test_record_then_replay_gives_identical_replies(nb: Path, name: str) -> None:
    _script(nb)
    recorder = make_provider(f"record:{name}:scripted:replies.yaml", nb)
    live = [_call(recorder, _messages(q)) for q in QUESTIONS]
    assert live[0].content.startswith("{") and live[0].reasoning == "plan the answer"
    assert len(load_cassette(nb / name)) == 3

    replay = make_provider(f"replay:{name}", nb)
    # out of order on purpose: strict replay matches by request, not position
    replayed = {q: _call(replay, _messages(q)) for q in reversed(QUESTIONS)}
    for question, reply in zip(QUESTIONS, live):
        assert _shape(replayed[question]) == _shape(reply)
        assert replayed[question].chunks >= 1 and replayed[question].cost == 0.0


def test_replay_streams_through_the_sink(nb: Path) -> None:
    _script(nb)
    recorder = make_provider("record:c.yaml:scripted:replies.yaml", nb)
    _call(recorder, _messages("What is 2+2?"))
    seen: dict[str, list[str]] = {"r": [], "c": []}

    class Sink:
        async def reasoning(self, delta: str, full: str) -> None:
            seen["r"].append(delta)

        async def response(self, delta: str, full: str) -> str | None:
            seen["c"].append(delta)
            return None

    replay = make_provider("replay:c.yaml", nb)
    reply = asyncio.run(complete(replay, _messages("What is 2+2?"), ModelConfig(spec="replay:c.yaml"), Sink()))
    assert "".join(seen["r"]) == "plan the answer" and "".join(seen["c"]) == reply.content
    assert len(seen["c"]) >= 2


@pytest.mark.slow
def test_record_and_replay_a_litellm_model(nb: Path) -> None:
    recorder = make_provider("record:llm.jsonl:openai/gpt-4o-mini", nb)
    live = _call(recorder, _messages("hi"), mock_response="hello from the mock", temperature=0)
    entry = load_cassette(nb / "llm.jsonl")[0]
    assert entry["request"]["model"] == "openai/gpt-4o-mini"
    assert entry["request"]["params"] == {"temperature": 0}  # mock_response is a test knob, not recorded
    replayed = _call(make_provider("replay:llm.jsonl", nb), _messages("hi"), temperature=0)
    assert _shape(replayed) == _shape(live) and replayed.model == "openai/gpt-4o-mini"


def test_strict_miss_shows_a_readable_diff_against_the_nearest_call(nb: Path) -> None:
    _script(nb)
    recorder = make_provider("record:c.yaml:scripted:replies.yaml", nb)
    _call(recorder, _messages("What is 2+2?"))
    _call(recorder, _messages("Write two lines about the sea.", system="A different system prompt."))
    replay = make_provider("replay:c.yaml", nb)
    with pytest.raises(ModelError) as info:
        _call(replay, _messages("What is 3+3?"))
    text = str(info.value)
    assert "strict" in text and "Nearest is recorded call #1" in text
    assert "-What is 2+2?" in text and "+What is 3+3?" in text
    assert "=== message 2 (user)" in text and "replay:c.yaml?mode=lax" in text
    assert "different system prompt" not in text  # the nearest call was chosen, not the last one


def test_lax_mode_replays_in_order_and_says_when_it_runs_out(nb: Path) -> None:
    _script(nb)
    recorder = make_provider("record:c.yaml:scripted:replies.yaml", nb)
    live = [_call(recorder, _messages(q)) for q in QUESTIONS]
    replay = make_provider("replay:c.yaml?mode=lax", nb)
    replayed = [_call(replay, _messages(f"something else {i}")) for i in range(3)]
    assert [r.content for r in replayed] == [r.content for r in live]
    with pytest.raises(ModelError, match="all 3 recorded calls"):
        _call(replay, _messages("one more"))


def test_lax_mode_from_the_settings_param(nb: Path) -> None:
    _script(nb)
    _call(make_provider("record:c.yaml:scripted:replies.yaml", nb), _messages("What is 2+2?"))
    replay = make_provider("replay:c.yaml", nb)
    assert _call(replay, _messages("unrelated"), _cassette_mode="lax").reasoning == "plan the answer"


def test_identical_requests_get_their_recorded_replies_in_order(nb: Path) -> None:
    _script(nb)
    recorder = make_provider("record:c.yaml:scripted:replies.yaml", nb)
    live = [_call(recorder, _messages("same")) for _ in range(2)]
    replay = make_provider("replay:c.yaml", nb)
    assert [_call(replay, _messages("same")).content for _ in range(3)] == [live[0].content, live[1].content,
                                                                            live[1].content]


# ---------------------------------------------------------------- fingerprints


def _request(**over: Any) -> dict[str, Any]:
    base = {"role": "chat", "model": "openai/gpt-4o-mini", "messages": _messages("hi"), "tools": None,
            "params": {"temperature": 0}}
    return {**base, **over}


def test_fingerprint_ignores_key_order_datetime_model_and_volatile_params() -> None:
    reference = fingerprint(_request())
    reordered = {"params": {"temperature": 0}, "tools": None, "messages": [
        {"content": m["content"], "role": m["role"]} for m in _messages("hi")], "role": "chat"}
    assert fingerprint(reordered) == reference
    moved_clock = _messages("hi", system=SYSTEM.replace("2026-01-31 09:30:00", "2031-12-02T23:59"))
    assert fingerprint(_request(messages=moved_clock)) == reference
    assert fingerprint(_request(model="anthropic/claude")) == reference
    noisy = {"temperature": 0, "stream": True, "stream_options": {"include_usage": True}, "mock_response": "x",
             "api_key": "sk-zzz", "_secret_values": ["abc"], "max_retries": 0}
    assert fingerprint(_request(params=noisy)) == reference
    assert "<datetime>" in normalise_request(_request())["messages"][0]["content"]


def test_fingerprint_changes_with_what_the_model_sees() -> None:
    reference = fingerprint(_request())
    assert fingerprint(_request(messages=_messages("hi!"))) != reference
    assert fingerprint(_request(role="utility")) != reference
    assert fingerprint(_request(params={"temperature": 0.7})) != reference
    assert fingerprint(_request(tools=[{"type": "function", "function": {"name": "f"}}])) != reference
    assert fingerprint(_request(messages=_messages("hi", system="You are a0.\nCurrent date: 2026-01-31"))) != reference


def test_replay_survives_a_changed_clock(nb: Path) -> None:
    _script(nb)
    _call(make_provider("record:c.yaml:scripted:replies.yaml", nb), _messages("What is 2+2?"))
    later = _messages("What is 2+2?", system=SYSTEM.replace("2026-01-31 09:30:00", "2026-02-14 18:05:11"))
    assert _call(make_provider("replay:c.yaml", nb), later).reasoning == "plan the answer"


# ---------------------------------------------------------------- secrets


def test_recorded_cassette_contains_no_secret_value(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent_secret, named_secret = "hunter2-correct-horse", "pw-0123456789"
    env_key, env_token = "sk-proj-envkey-abcdefghijklmnop", "ghp_tokenvalue1234567"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    monkeypatch.setenv("GITHUB_TOKEN", env_token)
    _script(nb, [f"the password is {agent_secret} and the key {env_key}", "ok"])
    recorder = make_provider("record:c.yaml:scripted:replies.yaml", nb)
    params = {"_secret_values": [agent_secret]}
    _call(recorder, _messages(f"use {agent_secret} and {env_token}"), **params)
    _call(recorder, _messages(f"db {named_secret}"), _secret_values={"DB_PASSWORD": named_secret})
    text = (nb / "c.yaml").read_text(encoding="utf-8")
    for value in (agent_secret, named_secret, env_key, env_token):
        assert value not in text
    assert "<redacted:secret>" in text and "§§secret(DB_PASSWORD)" in text
    assert "<redacted:OPENAI_API_KEY>" in text and "<redacted:GITHUB_TOKEN>" in text
    # the same secrets at replay time mask the new request the same way, so it still matches
    replayed = _call(make_provider("replay:c.yaml", nb), _messages(f"use {agent_secret} and {env_token}"), **params)
    assert agent_secret not in replayed.content and "<redacted:secret>" in replayed.content


def test_masker_handles_json_escaped_and_nested_values() -> None:
    masker = Masker.from_params({"_secret_values": {"multi": "line\none-secret"}}, environ={"SHORT_TOKEN": "abc"})
    masked = masker.mask({"k": ["x line\\none-secret y", "line\none-secret"], "short": "abc"})
    assert masked == {"k": ["x §§secret(MULTI) y", "§§secret(MULTI)"], "short": "abc"}


# ---------------------------------------------------------------- files and specs


def test_yaml_cassette_is_readable(nb: Path) -> None:
    _script(nb)
    recorder = make_provider("record:c.yaml:scripted:replies.yaml", nb)
    _call(recorder, _messages("What is 2+2?"))
    _call(recorder, _messages("Write two lines."))
    text = (nb / "c.yaml").read_text(encoding="utf-8")
    assert "content: |" in text and "  Current datetime: 2026-01-31 09:30:00" in text
    assert [p.name for p in nb.iterdir() if p.name.startswith(".")] == []  # no temp files left behind
    entries = yaml.safe_load(text)
    assert set(entries[0]) == {"fingerprint", "request", "response"}
    assert set(entries[0]["request"]) == {"role", "model", "messages", "tools", "params"}
    assert entries[0]["request"]["model"] == "scripted:replies.yaml"
    assert {"content", "reasoning", "tool_calls", "usage"} <= set(entries[0]["response"])
    assert entries[0]["fingerprint"] == fingerprint(entries[0]["request"])


def test_recording_appends_across_providers(nb: Path) -> None:
    _script(nb)
    _call(make_provider("record:c.jsonl:scripted:replies.yaml", nb), _messages("one"))
    _call(make_provider("record:c.jsonl:scripted:replies.yaml", nb), _messages("two"))
    lines = (nb / "c.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["request"]["messages"][1]["content"] for line in lines] == ["one", "two"]


def test_spec_forms(nb: Path) -> None:
    _script(nb)
    made: list[str] = []

    def make_inner(inner: str) -> Any:
        made.append(inner)
        return make_provider(inner, nb)

    recorder = cassette_provider("record:sub/c.yaml:scripted:replies.yaml", nb, make_inner)
    assert isinstance(recorder, RecordingProvider) and made == ["scripted:replies.yaml"]
    assert recorder.path == nb / "sub" / "c.yaml"
    assert provider_tags(recorder, ModelConfig(spec="x")) == frozenset()  # the inner's tags: no reasoning channel
    _call(recorder, _messages("x"))
    replay = cassette_provider("replay:sub/c.yaml?mode=lax", nb, make_inner)
    assert isinstance(replay, ReplayProvider) and replay.mode == "lax"
    for bad in ("record:c.yaml", "record::scripted:r.yaml", "record:c.txt:scripted:replies.yaml",
                "record:c.yaml:replay:other.yaml", "replay:sub/c.yaml?mode=random", "replay:"):
        with pytest.raises(ConfigError):
            cassette_provider(bad, nb, make_inner)


def test_missing_or_broken_cassette_is_a_config_error(nb: Path) -> None:
    with pytest.raises(ConfigError, match="record:none.yaml:"):
        make_provider("replay:none.yaml", nb)
    (nb / "bad.yaml").write_text("- just a string\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="list of entries"):
        make_provider("replay:bad.yaml", nb)
    (nb / "bad.jsonl").write_text("{not json\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid JSONL"):
        make_provider("replay:bad.jsonl", nb)


def test_empty_cassette_miss_has_no_diff(nb: Path) -> None:
    (nb / "empty.yaml").write_text("[]\n", encoding="utf-8")
    with pytest.raises(ModelError) as info:
        _call(make_provider("replay:empty.yaml", nb), _messages("hi"))
    assert "0 recorded" in str(info.value) and "Nearest" not in str(info.value)


def test_a_hand_edited_request_matches_without_fixing_the_fingerprint(nb: Path) -> None:
    _script(nb)
    _call(make_provider("record:c.yaml:scripted:replies.yaml", nb), _messages("What is 2+2?"))
    entries = yaml.safe_load((nb / "c.yaml").read_text(encoding="utf-8"))
    entries[0]["request"]["messages"][1]["content"] = "What is 5+5?"
    (nb / "c.yaml").write_text(yaml.safe_dump(entries), encoding="utf-8")
    assert _call(make_provider("replay:c.yaml", nb), _messages("What is 5+5?")).reasoning == "plan the answer"


def test_the_model_spec_quoted_in_the_prompt_does_not_break_replay(nb: Path) -> None:
    _script(nb)
    record_spec, replay_spec = "record:c.yaml:scripted:replies.yaml", "replay:c.yaml"
    _call(make_provider(record_spec, nb), _messages("hi", system=f"You are agent 0, using model {record_spec}."))
    assert record_spec not in (nb / "c.yaml").read_text(encoding="utf-8")
    replayed = _call(make_provider(replay_spec, nb), _messages("hi", system=f"You are agent 0, using model {replay_spec}."))
    assert replayed.reasoning == "plan the answer"


def test_appending_entries_writes_what_saving_them_all_writes(tmp_path: Path) -> None:
    entries = [{"fingerprint": f"f{i}", "request": {"messages": [{"role": "user", "content": f"line one\nline {i}"}]},
                "response": {"content": f"reply {i}", "usage": {"total_tokens": i}}} for i in range(4)]
    for suffix in (".yaml", ".jsonl"):
        appended, saved = tmp_path / f"appended{suffix}", tmp_path / f"saved{suffix}"
        for entry in entries:
            append_entry(appended, entry)
        save_cassette(saved, entries)
        assert appended.read_text() == saved.read_text()
        assert load_cassette(appended) == entries
    flow = tmp_path / "flow.yaml"  # a hand-edited flow-style list cannot take text at its end: loaded and saved
    flow.write_text(yaml.safe_dump(entries[:2], default_flow_style=True))
    append_entry(flow, entries[2])
    assert load_cassette(flow) == entries[:3]
    empty = tmp_path / "empty.yaml"
    empty.write_text("[]\n")
    append_entry(empty, entries[0])
    assert load_cassette(empty) == entries[:1]
