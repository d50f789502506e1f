"""The history's caches (issue 23): a step converts and counts only the messages new or changed since the step
before, and every cache sees a change: a field assigned on an old message (as an Agent Zero extension edits
history), a message replaced or removed (as compaction does), a topic or bulk summarised, a changed counter.
Each check compares the cached answer with the one a fresh copy of the history (no caches) gives."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a0nb import Agent
from a0nb.engine.chat_messages import IncrementalMessages, to_chat_messages
from a0nb.engine.history import IMAGE_REMOVED, Bulk, History, Message
from a0nb.engine.tokens import TokenCounter, approximate_tokens
from a0nb.providers.scripted import ScriptedProvider
from a0nb.testing import answer, tool_reply


def quarter(text: str) -> int:
    return len(text) // 4


def fresh(h: History) -> History:
    """The same history without any cache (rebuilt from its saved form)."""
    return History.from_dict(json.loads(json.dumps(h.to_dict())), counter=h.counter)


def assert_like_fresh(h: History) -> None:
    again = fresh(h)
    assert list(h.output()) == list(again.output())
    assert list(h.output(max_embeds=1)) == list(again.output(max_embeds=1))
    assert list(h.output(vision=False)) == list(again.output(vision=False))
    assert h.tokens() == again.tokens()
    assert [t.tokens(h.counter) for t in h.topics] == [t.tokens(h.counter) for t in again.topics]


def long_history(n: int = 40) -> History:
    h = History(counter=TokenCounter(quarter))
    for i in range(n):
        h.add(i % 2 == 1, {"user_message": f"question {i}"} if i % 2 == 0 else f"answer {i}", "user" if i % 2 == 0 else "ai")
    return h


def test_a_step_converts_and_counts_only_new_messages() -> None:
    counted: list[str] = []

    def fn(text: str) -> int:
        counted.append(text)
        return len(text)

    h = History(counter=TokenCounter(fn, maxsize=0))  # no counter-level cache: only the history's own
    for i in range(30):
        h.add(False, f"message {i}", "user")
    first = h.output()
    h.tokens()
    assert len(counted) == 30
    h.add(True, "new", "ai")
    second = h.output()
    assert all(a is b for a, b in zip(first, second)) and len(second) == 31  # the old items are the same objects
    h.tokens()
    assert counted[30:] == ["ai: new"]  # one new count, not 31


def test_field_edits_on_old_messages_are_seen() -> None:
    h = long_history()
    h.output(), h.tokens()
    middle = h.current.messages[10]
    middle.content = {"user_message": "edited in place by an extension"}
    assert_like_fresh(h)
    assert any("edited in place" in str(i.content) for i in h.output())
    h.current.messages[3].summary = "short"
    h.current.messages[5].ai = True
    h.current.messages[7].kind = "warning"
    h.current.messages[9].metadata = {"note": 1}
    h.current.messages[11].id = "renamed"
    assert_like_fresh(h)
    out = h.output()
    assert out[3].content == "short" and out[3].origin == "summarised-message"
    assert out[5].ai and out[7].kind == "warning" and out[9].metadata == {"note": 1}
    assert out[11].message_ids == ("renamed",)
    middle.content = middle.content  # a dict edited in place is seen once assigned again
    assert_like_fresh(h)


def test_a_dict_content_text_is_kept_until_the_content_is_assigned_again() -> None:
    h = History(counter=TokenCounter(fn=quarter))
    m = h.add(False, {"user_message": "first words"}, "user")
    assert h.output()[0].content == m.text() and h.tokens() == quarter("user: " + m.text())
    m.content["user_message"] = "in place, much longer words"
    assert "much longer" in m.text()  # text() itself is never cached
    m.content = m.content  # the edit made known: the output item, the count and the kept text follow
    assert "much longer" in h.output()[0].content and h.tokens() == quarter("user: " + m.text())
    assert_like_fresh(h)


def test_closed_topics_are_reused_until_their_messages_or_summary_change() -> None:
    h = History(counter=TokenCounter(fn=quarter))
    for t in range(30):
        h.add(False, f"question {t}", "user")
        h.add(True, f"answer {t} " * (t + 1), "ai")
        h.new_topic()
    h.add(False, "now", "user")
    h.output(), h.tokens()
    assert_like_fresh(h)
    old = h.topics[3]
    old.messages.append(Message("x1", True, "appended to an old topic, no field assigned", "ai"))
    assert_like_fresh(h)
    del h.topics[5].messages[0]  # (a list edit: no message changed)
    assert_like_fresh(h)
    h.topics[7].messages[1] = Message("x2", True, "replaced", "ai")
    assert_like_fresh(h)
    h.topics[9].summary = "topic nine, summarised"
    assert_like_fresh(h)
    assert any(i.content == "topic nine, summarised" for i in h.output())
    h.topics[9].summary = None
    h.topics[2].messages[0].content = "edited"  # a field assigned: every cache looks at its stamps
    assert_like_fresh(h)
    del h.topics[0]
    assert_like_fresh(h)
    assert h.output()[0].where == "topic 1"


def test_replaced_removed_and_reordered_messages_are_seen() -> None:
    h = long_history()
    h.output(), h.tokens()
    msgs = h.current.messages
    msgs[4:8] = [Message("m99", False, "a summary of four messages", "summary")]  # as compaction does
    assert_like_fresh(h)
    del msgs[0]
    assert_like_fresh(h)
    msgs[0], msgs[1] = msgs[1], msgs[0]
    assert_like_fresh(h)
    h.current.messages = list(reversed(msgs))
    assert_like_fresh(h)
    msgs = h.current.messages
    msgs[2] = msgs[2].clone()  # an equal copy in its place
    assert_like_fresh(h)
    msgs.clear()
    assert h.output() == [] and h.tokens() == 0


def test_summaries_bulks_and_topic_moves_are_seen() -> None:
    h = long_history(10)
    h.output(), h.tokens()
    h.new_topic()  # the current topic becomes "topic 1": its items say so
    h.add(False, "next", "user")
    assert [i.where for i in h.output()][:2] == ["topic 1", "topic 1"]
    assert_like_fresh(h)
    h.topics[0].summary = "ten messages in short"
    assert_like_fresh(h)
    h.topics[0].summary = "ten messages, shorter"
    assert h.output()[0].content == "ten messages, shorter"
    h.topics[0].messages[0].id = "x1"  # the summary item names its messages
    assert h.output()[0].message_ids[0] == "x1"
    h.bulks.append(Bulk([h.topics.pop(0)], "all of it", "b1"))
    assert_like_fresh(h)
    h.bulks[0].summary = "all of it, again"
    assert h.output()[0].content == "all of it, again"
    assert_like_fresh(h)
    h.bulks[0].records[0].messages.append(Message("x2", True, "late"))
    assert h.output()[0].message_ids[-1] == "x2"
    assert_like_fresh(h)


def test_images_are_trimmed_as_they_come_and_go() -> None:
    h = History()
    for i in range(3):
        h.add(False, {"raw_content": [{"type": "image_url", "image_url": {"url": f"u{i}"}}], "preview": "img"})
    assert [i.content == IMAGE_REMOVED for i in h.output(max_embeds=2)] == [True, False, False]
    h.add(False, {"raw_content": [{"type": "image_url", "image_url": {"url": "u3"}}], "preview": "img"})
    assert [i.content == IMAGE_REMOVED for i in h.output(max_embeds=2)] == [True, True, False, False]
    h.current.messages[3].summary = "an image, described"
    assert [i.content == IMAGE_REMOVED for i in h.output(max_embeds=2)] == [True, False, False, False]
    assert_like_fresh(h)


def test_a_different_counter_is_not_served_the_cached_total() -> None:
    h = long_history()
    assert h.tokens() == h.tokens(TokenCounter(quarter))
    assert h.tokens(TokenCounter(len)) == sum(len(m.rendered()) for m in h.current.messages)
    h.current.summary = "in short"
    assert h.tokens(TokenCounter(len)) == len("user: in short")


OPS = st.lists(st.tuples(st.sampled_from(["add", "edit", "summarise", "replace", "delete", "topic", "seal", "bulk",
                                          "unsummarise"]),
                         st.integers(0, 1000)), max_size=40)


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_caches_agree_with_a_fresh_history_after_any_edits(ops: list[tuple[str, int]]) -> None:
    h = History(counter=TokenCounter(quarter))
    for op, k in ops:
        msgs = h.current.messages
        if op == "add" or not msgs:
            h.add(k % 2 == 0, f"text {k}" if k % 3 else {"tool_result": f"r{k}"}, "other")
        elif op == "edit":
            msgs[k % len(msgs)].content = f"edited {k}"
        elif op == "summarise":
            msgs[k % len(msgs)].summary = f"sum {k}"
        elif op == "unsummarise":
            msgs[k % len(msgs)].summary = None
        elif op == "replace":
            i = k % len(msgs)
            msgs[i:i + 2] = [Message(h.new_id(), False, f"replaced {k}", "summary")]
        elif op == "delete":
            del msgs[k % len(msgs)]
        elif op == "topic":
            h.new_topic()
        elif op == "seal" and h.topics:
            h.topics[k % len(h.topics)].summary = f"topic in short {k}"
        elif op == "bulk" and h.topics:
            h.bulks.append(Bulk([h.topics.pop(0)], f"bulk {k}", h.new_id("b")))
        h.output()  # fill the caches after every operation, then compare with none
        assert_like_fresh(h)


def test_incremental_messages_match_a_full_conversion_and_hand_out_fresh_dicts() -> None:
    h = long_history(20)
    conv = IncrementalMessages()
    first = conv.convert(h.output(), "S")
    assert first == to_chat_messages(h.output(), "S")
    first[3]["content"] = "changed by a provider"  # the caller's copy, not the cache
    h.add(True, "more", "ai")
    h.add(True, {"raw_content": [{"type": "text", "text": "parts"}], "preview": "parts"}, "ai")  # merged: a list
    second = conv.convert(h.output(), "S")
    assert second == to_chat_messages(h.output(), "S")
    second[-1]["content"].append({"type": "text", "text": "edited"})
    h.current.messages[2].content = "an old message, edited"
    third = conv.convert(h.output(), "S")
    assert third == to_chat_messages(h.output(), "S")
    assert first[3]["content"] == "changed by a provider" and third[3]["content"] != "changed by a provider"


def test_scripted_usage_counts_every_message_after_any_change() -> None:
    provider = ScriptedProvider(["a", "b", "c", "d", "e"])

    def usage(messages: list[dict[str, Any]]) -> int:
        state = provider.init(None)  # type: ignore[arg-type]
        provider.initialize_request(messages, state)
        state["reply"] = provider._next(messages)
        return provider.finalize(state).usage["prompt_tokens"]

    def expected(messages: list[dict[str, Any]]) -> int:
        contents = [m.get("content", "") for m in messages]
        return sum(len(c) if isinstance(c, str) else len(str(c)) for c in contents) // 4

    msgs = [{"role": "system", "content": "S" * 40}] + [{"role": "user", "content": f"m{i}" * 10} for i in range(20)]
    assert usage(msgs) == expected(msgs)
    msgs.append({"role": "assistant", "content": [{"type": "text", "text": "parts"}]})
    assert usage(msgs) == expected(msgs)
    msgs[5] = {"role": "user", "content": "x" * 400}  # an old message replaced
    assert usage(msgs) == expected(msgs)
    assert usage(msgs[:3]) == expected(msgs[:3])
    msgs.append({"role": "assistant", "tool_calls": []})  # a message without content counts nothing
    assert usage(msgs) == expected(msgs)


def test_agent_steps_see_history_edited_by_an_extension_and_by_compaction(tmp_path: Path) -> None:
    replies = [tool_reply("noop", i=i) for i in range(5)] + [answer("done")]
    agent = Agent(tmp_path, model=replies * 2, settings={"ctx_length": 10_000_000})
    agent.register_tool(lambda i=0: "ok", name="noop")
    for i in range(20):
        agent.history.add(False, {"user_message": f"question {i}"}, "user")
        agent.history.add(True, f"answer {i} " + "words " * 30, "ai")
    mismatches: list[int] = []

    def edit(loop_data: Any = None, **kwargs: Any) -> None:  # an Agent Zero-style extension editing old history
        if loop_data.iteration == 2 and not agent.turns[1:]:
            agent.history.topics[0].messages[4].content = {"user_message": "EDITED BY EXTENSION"}

    def check(loop_data: Any = None, **kwargs: Any) -> None:  # what this step sends, against a cache-free build
        if list(loop_data.history_output) != list(fresh(agent.history).output()):
            mismatches.append(loop_data.iteration)

    agent.register_extension("message_loop_prompts_before", edit, name="edit")
    agent.register_extension("message_loop_prompts_after", check, name="check")
    agent.ask("go")
    calls = agent.models.records
    assert "EDITED BY EXTENSION" not in json.dumps(calls[1].messages)
    assert all("EDITED BY EXTENSION" in json.dumps(c.messages) for c in calls[2:])
    agent.configure(ctx_length=2000)  # compaction mid-session: the next steps summarise and truncate
    agent.ask("again")
    assert agent.data.get("compactions"), "the small budget compacted the history"
    assert not mismatches
    assert agent.history.tokens() == fresh(agent.history).tokens()


def test_a_message_count_is_the_count_of_its_rendered_text_after_each_change() -> None:
    # Message.tokens hands the counter the role and the text apart; the count is still `rendered()`'s, by the
    # exact counter and by the bound of organize_history, after each change of what is rendered
    from a0nb.engine.organize import _AtMost, at_most
    exact, bound, seen = TokenCounter(), _AtMost(at_most), []
    history = History()
    m = history.add(True, {"tool_name": "x", "tool_result": "é 🙂"}, "tool_result")
    for change in (lambda: None, lambda: setattr(m, "content", {"other": "text " * 9}),
                   lambda: setattr(m, "summary", "a summary of it, " * 5), lambda: setattr(m, "ai", False),
                   lambda: setattr(m, "summary", None), lambda: setattr(m, "content", "plain")):
        change()
        seen.append((m.tokens(exact), m.tokens(bound)))
        assert seen[-1] == (approximate_tokens(m.rendered()), at_most(m.rendered()))
    assert len(set(seen)) == len(seen)


@pytest.mark.parametrize("content", [
    {"a": "é\n\"x\u2028", "b": [1, 2.5, None, True, float("nan"), float("inf"), -float("inf")], "c": {"d": 1e300, 3: "k"}},
    [], {}, [[[]]], {True: 1, None: 2, 1.5: 3}, {"\ud800": "lone surrogate"}, [10 ** 30, -0.0]])
def test_a_content_renders_as_json_dumps_writes_it(content: Any) -> None:
    from a0nb.engine.history import render_content
    assert render_content(content) == json.dumps(content, ensure_ascii=False)


def test_a_content_json_cannot_write_fails_as_json_dumps_does() -> None:
    from a0nb.engine.history import render_content
    cycle: list[Any] = []
    cycle.append(cycle)
    for bad in (cycle, {"x": object()}, {(1, 2): 3}):
        with pytest.raises(Exception) as ours:
            render_content(bad)  # type: ignore[arg-type]
        with pytest.raises(Exception) as theirs:
            json.dumps(bad, ensure_ascii=False)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
    assert render_content({"ok": 1}) == '{"ok": 1}'  # (nothing an error left behind is seen by the next one)
