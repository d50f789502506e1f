"""History data model: topics and bulks, output with provenance, chat messages, persistence, validation."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from a0nb.engine.chat_messages import to_chat_messages
from a0nb.engine.history import IMAGE_REMOVED, Bulk, History, Message, OutputItem, Topic
from a0nb.engine.tokens import TokenCounter


def quarter(text: str) -> int:
    return len(text) // 4


def make_history() -> History:
    """bulk 1 (topic t-old) | topic 1 (summarised message) | topic 2 (topic summary) | current."""
    h = History(counter=TokenCounter(quarter))
    h.add(False, {"user_message": "old question"}, "user")
    h.add(True, "old answer", "ai")
    h.new_topic()
    old = h.topics.pop()
    h.bulks.append(Bulk([old], "the user asked an old question", h.new_id("b")))
    h.add(False, {"user_message": "second"}, "user")
    big = h.add(False, {"tool_result": "x" * 50}, "tool_result", tool_name="code_execution")
    big.summary = '{"tool_result": "x…"}'
    h.new_topic()
    h.add(False, {"user_message": "third"}, "user")
    h.add(True, "third answer", "ai")
    h.new_topic()
    h.topics[-1].summary = "third topic in short"
    h.add(False, {"user_message": "now"}, "user")
    h.add(True, "working on it", "ai")
    return h


def test_add_assigns_deterministic_ids_and_new_topic_seals_only_non_empty() -> None:
    h = History()
    h.new_topic()
    assert h.topics == []
    first = h.add(False, "hi", "user")
    second = h.add(True, "hello", "ai")
    assert (first.id, second.id) == ("m1", "m2")
    h.new_topic()
    assert len(h.topics) == 1 and h.topics[0].messages == [first, second]
    assert h.current.messages == [] and h.current.id == "t3"
    h.new_topic()
    assert len(h.topics) == 1


def test_added_message_is_the_message_its_constructor_makes() -> None:
    """History.add builds its Message without the constructor (no __setattr__ per field): the same fields,
    and a change to it still reaches the caches."""
    h = History(counter=TokenCounter(quarter))
    meta = {"tool_name": "noop"}
    added = h.add(False, {"tool_result": "ok"}, "tool_result", **meta)
    made = Message("m1", False, {"tool_result": "ok"}, "tool_result", None, {"tool_name": "noop"})
    assert added == made and vars(added).keys() == vars(made).keys()
    assert {k: v for k, v in vars(added).items()} == {k: v for k, v in vars(made).items()}
    assert added.metadata is not meta
    before = h.output()[0].content, h.tokens()
    added.content = {"tool_result": "a much longer result than before"}
    assert h.output()[0].content != before[0] and h.tokens() > before[1]


def test_add_rejects_unknown_kind() -> None:
    try:
        History().add(False, "x", "bogus")  # type: ignore[arg-type]
    except ValueError as e:
        assert "bogus" in str(e)
    else:
        raise AssertionError("expected ValueError")


def test_output_order_and_provenance() -> None:
    h = make_history()
    items = h.output()
    assert [i.where for i in items] == ["bulk 1", "topic 1", "topic 1", "topic 2", "current topic", "current topic"]
    assert [i.origin for i in items] == ["bulk-summary", "raw", "summarised-message", "topic-summary", "raw", "raw"]
    bulk, _, summarised, topic_summary, _, last = items
    assert bulk.ai is False and bulk.content == "the user asked an old question" and bulk.kind == "summary"
    assert bulk.message_ids == ("m1", "m2")
    assert summarised.content == '{"tool_result": "x…"}' and summarised.metadata["tool_name"] == "code_execution"
    assert topic_summary.ai is False and topic_summary.content == "third topic in short"
    assert topic_summary.message_ids == tuple(m.id for m in h.topics[1].messages)
    assert last.ai is True and last.content == "working on it" and last.kind == "ai"
    assert items[1].content == '{"user_message": "second"}'


def test_messages_lists_every_raw_message_in_order() -> None:
    h = make_history()
    contents = [m.content for m in h.messages()]
    assert contents[0] == {"user_message": "old question"}
    assert contents[-1] == "working on it"
    assert len(contents) == 8


def test_tokens_count_rendered_output_and_summaries_replace_content() -> None:
    h = make_history()
    q = TokenCounter(quarter)
    expected = (quarter("user: the user asked an old question")
                + quarter('user: {"user_message": "second"}') + quarter('user: {"tool_result": "x…"}')
                + quarter("user: third topic in short")
                + quarter('user: {"user_message": "now"}') + quarter("ai: working on it"))
    assert h.tokens() == expected
    assert h.tokens(q) == expected


def test_message_token_cache_is_invalidated_by_summary_and_content() -> None:
    calls: list[str] = []

    def fn(text: str) -> int:
        calls.append(text)
        return len(text)

    counter = TokenCounter(fn, maxsize=0)  # no counter-level cache: only the message cache is exercised
    m = Message("m1", True, "hello")
    assert m.tokens(counter) == len("ai: hello")
    m.tokens(counter)
    assert calls == ["ai: hello"]
    m.summary = "hi"
    assert m.tokens(counter) == len("ai: hi")
    m.summary = None
    m.content = "hello there"
    assert m.tokens(counter) == len("ai: hello there")
    m.ai = False
    assert m.tokens(counter) == len("user: hello there")
    assert len(calls) == 4
    other = TokenCounter(quarter)  # a different counting rule does not reuse the cached value
    assert m.tokens(other) == quarter("user: hello there")


def test_text_renders_json_on_one_line_without_ascii_escapes() -> None:
    assert Message("a", False, {"k": "é", "n": [1, 2]}).text() == '{"k": "é", "n": [1, 2]}'
    assert Message("b", False, ["x", {"y": 1}]).text() == '["x", {"y": 1}]'
    assert Message("c", True, "plain").text() == "plain"


def test_raw_message_outputs_parts_and_counts_its_preview() -> None:
    h = History(counter=TokenCounter(quarter))
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:..."}}]
    m = h.add(False, {"raw_content": parts, "preview": "an image of a cat"}, "user")
    assert m.text() == "an image of a cat"
    (item,) = h.output()
    assert item.content == parts and item.origin == "raw"
    no_preview = Message("x", False, {"raw_content": [{"type": "text", "text": "t" * 300}]})
    assert no_preview.text().endswith("... (trimmed)") and len(no_preview.text()) < 130


def test_images_are_trimmed_to_the_newest_embeds_or_all_without_vision() -> None:
    h = History()
    for i in range(3):
        h.add(False, {"raw_content": [{"type": "image_url", "image_url": {"url": f"u{i}"}}], "preview": "img"})
    kept = h.output(max_embeds=2)
    assert [i.content == IMAGE_REMOVED for i in kept] == [True, False, False]
    assert all(i.content == IMAGE_REMOVED for i in h.output(vision=False))
    assert all(i.content != IMAGE_REMOVED for i in h.output(max_embeds=0))


def test_chat_messages_for_greeting_and_user_message() -> None:
    # reference §8.3 item 14, without extras
    h = History()
    h.add(True, '{"tool_name": "response", "tool_args": {"text": "Hi!"}}', "ai")
    h.new_topic()
    h.add(False, {"user_message": "hi"}, "user")
    msgs = to_chat_messages(h.output(), system="SYSTEM")
    assert msgs == [{"role": "system", "content": "SYSTEM"},
                    {"role": "assistant", "content": '{"tool_name": "response", "tool_args": {"text": "Hi!"}}'},
                    {"role": "user", "content": '{"user_message": "hi"}'}]


def item(ai: bool, content: str | list) -> OutputItem:
    return OutputItem(ai, content, ("m",), "raw", "current topic", "ai" if ai else "user")


def test_chat_messages_merge_same_roles_and_skip_empty() -> None:
    image = {"type": "image_url", "image_url": {"url": "u"}}
    msgs = to_chat_messages([item(False, "a"), item(False, "  "), item(False, "b"), item(True, "c"),
                             item(False, "d"), item(False, [image]), item(True, "")])
    assert msgs == [{"role": "user", "content": "a\nb"}, {"role": "assistant", "content": "c"},
                    {"role": "user", "content": [{"type": "text", "text": "d"}, image]}]
    assert to_chat_messages([]) == []
    assert to_chat_messages([], system="") == [{"role": "system", "content": "empty"}]


def test_chat_messages_do_not_alias_item_parts() -> None:
    parts = [{"type": "text", "text": "p"}]
    msgs = to_chat_messages([item(False, parts), item(False, "q")])
    assert parts == [{"type": "text", "text": "p"}]
    assert msgs[0]["content"] == [{"type": "text", "text": "p"}, {"type": "text", "text": "q"}]


def test_round_trip_through_json() -> None:
    h = make_history()
    data = json.loads(json.dumps(h.to_dict()))
    back = History.from_dict(data, counter=TokenCounter(quarter))
    assert back.to_dict() == h.to_dict()
    assert back.output() == h.output()
    assert back.tokens() == h.tokens()
    assert back.validate() == []
    new = back.add(False, "next")
    assert new.id not in {m.id for m in h.messages()}
    assert data["_cls"] == "History" and data["bulks"][0]["_cls"] == "Bulk"
    assert data["current"]["messages"][0]["_cls"] == "Message"


def test_copy_is_independent_and_keeps_token_caches() -> None:
    h = make_history()
    h.tokens()
    snap = h.copy()
    assert snap.to_dict() == h.to_dict()
    assert snap.current.messages[0]._tokens == h.current.messages[0]._tokens
    snap.current.messages[0].content["user_message"] = "changed"
    snap.add(True, "more")
    snap.bulks[0].records[0].messages[0].summary = "s"
    assert h.current.messages[0].content == {"user_message": "now"}
    assert len(h.current.messages) == 2
    assert h.bulks[0].records[0].messages[0].summary is None


def test_validate_accepts_a_consistent_history() -> None:
    assert make_history().validate() == []
    assert History().validate() == []


def test_validate_reports_problems() -> None:
    h = make_history()
    h.current.messages.append(h.current.messages[0])            # same object twice
    h.current.messages.append(Message("m1", False, "dup id"))   # id of a message inside the bulk
    h.current.messages.append(Message("z1", "yes", 3))  # type: ignore[arg-type]
    h.current.messages.append(Message("z2", False, {"raw_content": "not parts"}))
    h.current.messages.append(Message("z3", False, {"x": {1, 2}}))
    h.current.messages.append(Message("z4", False, "k", kind="nonsense"))  # type: ignore[arg-type]
    h.topics.append(Topic([], None, "t-empty"))
    h.bulks.append(Bulk([], "nothing", h.bulks[0].id))
    problems = "\n".join(h.validate())
    for fragment in ("same object appears twice", "duplicate message id 'm1'", "ai must be a bool",
                     "content must be str, dict or list", "raw_content must be a list", "not JSON-serialisable",
                     "unknown kind 'nonsense'", "sealed topic is empty", "bulk has no records",
                     "duplicate topic/bulk id"):
        assert fragment in problems, fragment


def test_validate_reports_current_topic_also_sealed() -> None:
    h = make_history()
    h.topics.append(h.current)
    assert any("same object appears twice" in p for p in h.validate())


contents = st.one_of(st.text(max_size=40), st.dictionaries(st.text(max_size=5), st.text(max_size=10), max_size=3),
                     st.lists(st.integers(), max_size=3))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.booleans(), contents), min_size=0, max_size=4), max_size=6),
       st.integers(min_value=0, max_value=2))
def test_round_trip_and_validate_for_random_histories(topics: list, bulked: int) -> None:
    h = History(counter=TokenCounter(quarter))
    for topic in topics:
        for ai, content in topic:
            h.add(ai, content)
        h.new_topic()
    if len(h.topics) > bulked:
        group, h.topics[:bulked] = h.topics[:bulked], []
        if group:
            h.bulks.append(Bulk(group, "summary", h.new_id("b")))
    assert h.validate() == []
    back = History.from_dict(json.loads(json.dumps(h.to_dict())), counter=TokenCounter(quarter))
    assert back.to_dict() == h.to_dict() and back.tokens() == h.tokens()
    assert [m.id for m in back.messages()] == [m.id for m in h.messages()]
    assert sum(len(i.message_ids) for i in h.output()) == len(h.messages())


def test_from_dict_without_seq_does_not_reuse_ids() -> None:
    data = make_history().to_dict()
    del data["seq"]
    back = History.from_dict(data)
    assert back.add(False, "x").id not in {m.id for m in make_history().messages()}
    assert back.validate() == []


def test_from_dict_without_seq_skips_ids_nested_in_bulks() -> None:
    data = make_history().to_dict()
    del data["seq"]
    back = History.from_dict(data)
    back.new_topic()
    back.add(False, "y")
    assert back.validate() == []
