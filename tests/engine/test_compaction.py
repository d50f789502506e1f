"""Compaction: Agent Zero's passes (§5.4, §8.3 items 20-21) and our guarantee that it always ends within budget."""
from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a0nb.engine.compaction import (CompactionSettings, CompactionTemplates, compact, cut_text, truncate_value)
from a0nb.errors import ConfigError
from a0nb.engine.history import Bulk, History, Message
from a0nb.engine.tokens import TokenCounter, approximate_tokens


def quarter(text: str) -> int:
    return len(text) // 4


class FakeSummarizer:
    """Records calls; `reply` maps the message prompt to a summary."""

    def __init__(self, reply=lambda prompt: "S") -> None:
        self.calls: list[tuple[str, str]] = []
        self.reply = reply

    async def __call__(self, system: str, message: str) -> str:
        self.calls.append((system, message))
        await asyncio.sleep(0)
        return self.reply(message)


def run(coro):
    return asyncio.run(coro)


def budget_settings(budget: int, **kw) -> CompactionSettings:
    return CompactionSettings(ctx_length=budget, history_share=1.0, **kw)


def total(h: History, counter: TokenCounter) -> int:
    return h.tokens(counter)


# -- §8.3 item 20 --------------------------------------------------------------------------------------------

def test_large_current_message_gets_a_truncated_json_summary() -> None:
    counter = TokenCounter(quarter)
    h = History(counter=counter)
    first = h.add(False, {"user_message": "run it"}, "user")
    reply = h.add(True, '{"tool_name": "code_execution"}', "ai")
    big = h.add(False, {"tool_name": "code_execution", "output": "line of output\n" * 400}, "tool_result")
    assert big.tokens(counter) > 0.25 * 1000 and total(h, counter) > 1000
    summarize = FakeSummarizer()
    event = run(compact(h, budget_settings(1000), summarize, counter))
    assert event is not None and event.mode == "truncation"  # nothing was summarised
    assert summarize.calls == []
    assert [m.id for m in h.current.messages] == [first.id, reply.id, big.id]
    assert first.summary is None and reply.summary is None
    assert big.content["output"] == "line of output\n" * 400  # the original stays; the summary replaces it
    shortened = json.loads(big.summary)
    assert shortened["tool_name"] == "code_execution"
    assert "characters removed" in shortened["output"]
    assert big.tokens(counter) <= 0.25 * 1000
    assert event.replacements[0].what == "current topic message 3"
    assert event.replacements[0].by == "truncated"
    assert event.tokens_after == total(h, counter) <= 1000


def ten_small_messages(counter: TokenCounter) -> History:
    h = History(counter=counter)
    for i in range(10):
        h.add(i % 2 == 1, f"message {i + 1}: " + "word " * 85, "ai" if i % 2 else "user")
    assert all(m.tokens(counter) < 250 for m in h.current.messages) and total(h, counter) > 1000
    return h


def test_attention_compression_replaces_messages_2_to_4_by_one_summary() -> None:
    counter = TokenCounter(quarter)
    h = ten_small_messages(counter)
    original = list(h.current.messages)
    summarize = FakeSummarizer(lambda prompt: "they talked")
    event = run(compact(h, budget_settings(1000, max_passes=1), summarize, counter))
    assert event is not None and event.mode == "utility"
    assert event.replacements[0].what == "current topic messages 2-4"
    messages = h.current.messages
    assert len(messages) == 8
    assert messages[0] is original[0]
    assert messages[1].ai is False and messages[1].kind == "summary"
    assert messages[1].content == {"messages_summary": "they talked"}
    assert messages[1].metadata["summarises"] == [m.id for m in original[1:4]]
    assert messages[2:] == original[4:]
    (system, prompt), = summarize.calls
    assert "message 2:" in prompt and "message 4:" in prompt
    assert "message 1:" not in prompt and "message 5:" not in prompt
    assert h.validate() == []


def test_attention_compression_continues_until_the_current_topic_fits_its_share() -> None:
    counter = TokenCounter(quarter)
    h = ten_small_messages(counter)
    first = h.current.messages[0]
    event = run(compact(h, budget_settings(1000), FakeSummarizer(), counter))
    assert event is not None and h.current.messages[0] is first
    assert h.current.messages[-1].content.startswith("message 10:")
    assert total(h, counter) <= 0.5 * 0.8 * 1000
    assert all(r.what.startswith("current topic messages 2-") for r in event.replacements)


def test_current_topic_is_untouched_while_within_its_share() -> None:
    counter = TokenCounter(quarter)
    h = History(counter=counter)
    for t in range(12):
        h.add(False, f"question {t} " + "q " * 60, "user")
        h.add(True, "answer " * 80, "ai")
        h.new_topic()
    h.add(False, "current request", "user")
    h.add(True, "small reply", "ai")
    current = list(h.current.messages)
    event = run(compact(h, budget_settings(1000), FakeSummarizer(), counter))
    assert event is not None
    assert h.current.messages == current and all(m.summary is None for m in current)


# -- §8.3 item 21 ---------------------------------------------------------------------------------------------

def test_token_estimate_of_ai_hello() -> None:
    counter = TokenCounter()
    assert Message("m1", True, "hello").tokens(counter) == approximate_tokens("ai: hello")
    pytest.importorskip("tiktoken")
    from a0nb.engine.tokens import load_cl100k
    encoding = load_cl100k()
    if encoding is None:
        pytest.skip("cl100k file not available offline")
    assert Message("m1", True, "hello").tokens(counter) == int(1.1 * len(encoding.encode("ai: hello")))


# -- the whole algorithm ------------------------------------------------------------------------------------

def long_history(counter: TokenCounter, topics: int = 40, per_topic: int = 5) -> History:
    h = History(counter=counter)
    for t in range(topics):
        h.add(False, {"user_message": f"task {t}: " + "please do the thing " * 10}, "user")
        for j in range(per_topic - 1):
            h.add(j % 2 == 0, f"step {t}.{j} " + "detail " * 40, "ai" if j % 2 == 0 else "tool_result")
        h.new_topic()
    h.add(False, {"user_message": "latest request"}, "user")
    return h


def test_no_event_and_no_change_when_within_budget() -> None:
    counter = TokenCounter(quarter)
    h = long_history(counter, topics=2)
    before = h.to_dict()
    summarize = FakeSummarizer()
    assert run(compact(h, budget_settings(10_000), summarize, counter)) is None
    assert h.to_dict() == before and summarize.calls == []


def test_two_stage_compaction_topics_to_bulks_then_bulks_merged() -> None:
    counter = TokenCounter(quarter)
    h = long_history(counter)
    first_ids = [t.messages[0].id for t in h.topics]
    summarize = FakeSummarizer(lambda prompt: "summary " * 30)  # ~60 tokens: bulks outgrow their share
    event = run(compact(h, budget_settings(3000), summarize, counter))
    assert event is not None and event.mode == "utility" and event.budget == 3000
    assert event.tokens_before > 3000 and event.tokens_after == total(h, counter) <= 3000
    whats = [r.what for r in event.replacements]
    assert any(w.startswith("topic 1 messages 2-") for w in whats)   # attention compression of old topics
    assert "topics 1-3" in whats                                     # topics moved into a bulk
    assert any(w.startswith("bulks ") for w in whats)                # bulks merged in threes
    assert any(isinstance(r, Bulk) for b in h.bulks for r in b.records)
    for topic in h.topics:  # old topics keep only their first and last message around one summary
        assert len(topic.messages) == 3 and topic.messages[1].kind == "summary"
    kept = {m.id for m in h.messages()}
    assert all(i in kept for i in first_ids)  # moved into bulks, not lost
    items = h.output()
    origins = [i.origin for i in items]
    assert origins[:len(h.bulks)] == ["bulk-summary"] * len(h.bulks)
    assert items[-1].where == "current topic"
    assert h.validate() == []
    assert all(system == CompactionTemplates().summary_system for system, _ in summarize.calls)


def test_truncation_only_mode_is_deterministic_and_marked() -> None:
    counter = TokenCounter(quarter)
    a, b = long_history(counter), long_history(counter)
    event_a = run(compact(a, budget_settings(3000), None, counter))
    event_b = run(compact(b, budget_settings(3000), None, counter))
    assert event_a == event_b and a.to_dict() == b.to_dict()
    assert event_a.mode == "truncation" and event_a.tokens_after <= 3000
    note = CompactionTemplates().truncation_note
    assert all(bulk.summary.startswith(note) for bulk in a.bulks)
    assert all(r.by in ("truncated", "excerpt (no summariser)", "bulk excerpt (no summariser)", "dropped")
               for r in event_a.replacements)
    assert a.validate() == []


def test_custom_templates_are_used() -> None:
    counter = TokenCounter(quarter)
    h = ten_small_messages(counter)
    h.add(False, "z" * 2000, "tool_result")
    templates = CompactionTemplates(summary_system="SYS", summary_message=lambda texts: f"N={len(texts)}",
                                    truncation_marker=lambda n: f"<cut {n}>",
                                    messages_summary=lambda s: {"digest": s})
    summarize = FakeSummarizer(lambda prompt: prompt)
    run(compact(h, budget_settings(1000), summarize, counter, templates))
    assert summarize.calls[0] == ("SYS", "N=4")  # 11 messages: k = 9 - floor(5.85)
    assert "<cut " in h.current.messages[-1].summary
    assert h.current.messages[1].content == {"digest": summarize.calls[-1][1]}


def test_summaries_longer_than_their_input_still_end_within_budget() -> None:
    counter = TokenCounter(quarter)
    h = long_history(counter)
    summarize = FakeSummarizer(lambda prompt: prompt * 3)
    event = run(compact(h, budget_settings(3000), summarize, counter))
    assert event is not None and event.tokens_after == total(h, counter) <= 3000
    assert any("cut" in r.by or "excerpt" in r.by or r.by == "dropped" for r in event.replacements)
    assert h.validate() == []


def test_oldest_bulks_are_dropped_when_summaries_stop_shrinking() -> None:
    counter = TokenCounter(quarter)
    h = History(counter=counter)
    h.add(False, "old", "user")
    h.new_topic()
    h.bulks.append(Bulk([h.topics.pop()], "B" * 5000, h.new_id("b")))
    h.add(False, "now", "user")
    event = run(compact(h, budget_settings(300), FakeSummarizer(lambda prompt: "x" * 4000), counter))
    assert event is not None and total(h, counter) <= 300
    assert ("bulk 1", "dropped") in [(r.what, r.by) for r in event.replacements]
    assert h.bulks == [] and h.current.messages[0].content == "now"


def test_a_current_message_larger_than_the_budget_is_truncated_to_fit() -> None:
    counter = TokenCounter(quarter)
    h = History(counter=counter)
    h.add(False, "U" * 40_000, "user")
    event = run(compact(h, budget_settings(500), None, counter))
    assert event is not None and total(h, counter) <= 500
    (message,) = h.current.messages
    assert message.summary is not None and "characters removed" in message.summary


def test_tiny_budgets_terminate_even_if_everything_must_go() -> None:
    counter = TokenCounter(quarter)
    for budget in (0, 1, 3, 10):
        h = long_history(counter, topics=5)
        event = run(compact(h, budget_settings(budget), FakeSummarizer(), counter))
        assert event is not None and total(h, counter) <= budget
        assert h.validate() == []


def test_bookkeeping_does_not_recount_unchanged_messages() -> None:
    calls = 0

    def fn(text: str) -> int:
        nonlocal calls
        calls += 1
        return len(text) // 4

    counter = TokenCounter(fn, maxsize=0)
    h = long_history(counter, topics=200)
    h.tokens()
    calls = 0
    event = run(compact(h, budget_settings(4000), FakeSummarizer(), counter))
    assert event is not None
    # each replacement creates a handful of new texts; nothing proportional to the history size per pass
    assert calls <= 3 * len(event.replacements) + 10


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError):
        run(compact(History(), CompactionSettings(current_share=0), None, TokenCounter()))
    with pytest.raises(ConfigError):
        run(compact(History(), CompactionSettings(current_keep=1.0), None, TokenCounter()))
    assert CompactionSettings().budget == 89_600


def test_cut_text_and_truncate_value() -> None:
    marker = lambda n: f"[-{n}]"  # noqa: E731
    assert cut_text("short", 3, marker) == "short"  # cutting would not save space
    assert cut_text("abcdefghijklmnopqrstuvwxyz", 4, marker) == "ab[-22]yz"
    value = {"a": "x" * 100, "b": ["y" * 100, "z" * 100, 1], "c": 5}
    out = truncate_value(value, 60, marker)
    assert set(out) == {"a", "b", "c"} and out["c"] == 5
    assert len(json.dumps(out)) < len(json.dumps(value))
    assert truncate_value(value, 10_000, marker) == value
    assert truncate_value(["q" * 50] * 10, 60, marker)[-1].startswith("[-")


# -- the guarantee, for arbitrary histories -------------------------------------------------------------

def summarizers():
    return st.sampled_from([None, "short", "longer", "empty"])


def make_summarize(kind):
    if kind is None:
        return None
    return FakeSummarizer({"short": lambda p: "gist", "longer": lambda p: p + " and more " + p,
                           "empty": lambda p: ""}[kind])


message = st.tuples(st.booleans(), st.one_of(st.text(max_size=300), st.integers(0, 3000).map(lambda n: "w " * n),
                                             st.dictionaries(st.sampled_from(["a", "b"]), st.text(max_size=400),
                                                             max_size=2)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topics=st.lists(st.lists(message, min_size=1, max_size=8), max_size=10),
       current=st.lists(message, max_size=12), bulks=st.lists(st.integers(0, 3000), max_size=4),
       budget=st.integers(0, 4000), kind=summarizers())
def test_compaction_always_terminates_within_budget(topics, current, bulks, budget, kind) -> None:
    counter = TokenCounter(quarter)
    h = History(counter=counter)
    for size in bulks:
        h.add(False, "old")
        h.new_topic()
        h.bulks.append(Bulk([h.topics.pop()], "s " * size, h.new_id("b")))
    for topic in topics:
        for ai, content in topic:
            h.add(ai, content)
        h.new_topic()
    for ai, content in current:
        h.add(ai, content)
    before = total(h, counter)
    summarize = make_summarize(kind)
    event = run(compact(h, budget_settings(budget), summarize, counter))
    after = total(h, counter)
    assert after <= budget
    assert (event is None) == (before <= budget)
    if event is not None:
        assert event.tokens_before == before and event.tokens_after == after
    assert h.validate() == []
    if summarize is not None:
        assert len(summarize.calls) <= 2 * len(h.messages()) + 4 * (len(topics) + len(bulks) + len(current)) + 10


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=st.lists(st.integers(1, 400), min_size=1, max_size=30), budget=st.integers(0, 3000),
       kind=summarizers())
def test_guarantee_holds_with_the_real_token_counter(sizes, budget, kind) -> None:
    counter = TokenCounter()
    h = History(counter=counter)
    for i, size in enumerate(sizes):
        h.add(i % 2 == 1, {"text": "tokens and words " * size})
        if i % 4 == 3:
            h.new_topic()
    run(compact(h, budget_settings(budget), make_summarize(kind), counter))
    assert total(h, counter) <= budget and h.validate() == []


# -- smaller rules of §5.4 ------------------------------------------------------------------------------------

def test_older_topic_message_over_six_percent_is_truncated_first() -> None:
    counter = TokenCounter(quarter)
    h = History(counter=counter)
    for t in range(6):
        h.add(False, f"task {t} " + "t " * 40, "user")
        h.add(False, {"tool_result": "r" * (2400 if t == 2 else 100)}, "tool_result")
        h.add(True, "done " * 20, "ai")
        h.new_topic()
    h.add(False, "now", "user")
    summarize = FakeSummarizer()
    event = run(compact(h, budget_settings(1000, max_passes=1), summarize, counter))
    assert event is not None and summarize.calls == []
    assert event.replacements[0].what == "topic 3 message 2" and event.replacements[0].by == "truncated"
    assert h.topics[2].messages[1].tokens(counter) <= 0.06 * 1000


def test_raw_messages_are_replaced_whole_not_cut() -> None:
    counter = TokenCounter(quarter)
    h = History(counter=counter)
    h.add(False, "describe", "user")
    raw = h.add(False, {"raw_content": [{"type": "text", "text": "p" * 4000}], "preview": "p" * 4000})
    run(compact(h, budget_settings(1000), None, counter))
    assert raw.summary == CompactionTemplates().raw_replaced
    (item,) = [i for i in h.output() if raw.id in i.message_ids]
    assert item.origin == "summarised-message" and item.content == raw.summary


def test_topics_with_a_summary_are_not_truncated_or_attention_compressed() -> None:
    counter = TokenCounter(quarter)
    h = long_history(counter, topics=4)
    h.topics[0].summary = "done by hand"
    messages = list(h.topics[0].messages)
    event = run(compact(h, budget_settings(800, max_passes=4), FakeSummarizer(), counter))
    assert event is not None
    assert all(not r.what.startswith("topic 1 ") for r in event.replacements[:3])
    assert all(m.summary is None for m in messages) and len(messages) == 5


def test_bulks_are_regrouped_in_threes_and_fresh_single_bulks_left_alone() -> None:
    counter = TokenCounter(quarter)
    h = History(counter=counter)
    for i in range(4):
        h.add(False, f"old {i}")
        h.new_topic()
        h.bulks.append(Bulk([h.topics.pop()], f"bulk {i} " + "b " * 800, h.new_id("b")))
    h.add(False, "now", "user")
    summarize = FakeSummarizer(lambda prompt: "merged")
    event = run(compact(h, budget_settings(1000), summarize, counter))
    assert event is not None
    assert [r.what for r in event.replacements[:2]] == ["bulks 1-3", "bulk 4"]
    assert [b.summary for b in h.bulks] == ["merged", "merged"]  # both fresh now: not summarised again alone
    assert len(summarize.calls) == 2
    assert [m.content for m in h.messages()][:4] == ["old 0", "old 1", "old 2", "old 3"]
    assert h.validate() == []


def test_a_pass_limit_still_ends_within_budget() -> None:
    counter = TokenCounter(quarter)
    h = long_history(counter)
    event = run(compact(h, budget_settings(2000, max_passes=0), FakeSummarizer(), counter))
    assert event is not None and total(h, counter) <= 2000
    assert all(r.by in ("dropped", "truncated to fit the budget") for r in event.replacements)


def test_events_are_immutable_records() -> None:
    counter = TokenCounter(quarter)
    h = ten_small_messages(counter)
    event = run(compact(h, budget_settings(1000), None, counter))
    assert event is not None and isinstance(event.replacements, tuple)
    with pytest.raises(AttributeError):
        event.tokens_after = 0  # type: ignore[misc]
