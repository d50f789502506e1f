"""Composition step after step: the incremental Composer gives exactly what a from-scratch build gives,
whatever changes between steps (appends, edits, removals, summaries), and hands out fresh messages."""
from __future__ import annotations

from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from a0nb.engine import composition
from a0nb.engine.chat_messages import IncrementalMessages, fresh_messages, to_chat_messages
from a0nb.engine.history import OutputItem
from a0nb.engine.loop_data import LoopData
from a0nb.engine.tokens import TokenCounter

CONTENTS = st.one_of(st.sampled_from(["", "  ", "a", "b c", '{"tool_name": "x"}']), st.text(max_size=12),
                     st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=5)}),
                              max_size=2))


@st.composite
def items(draw: Any) -> OutputItem:
    skill = draw(st.booleans()) and draw(st.booleans())
    meta = {"skill_instructions": {"source": "skills_tool:reattach", "name": "s", "path": "p"}} if skill else {}
    return OutputItem(draw(st.booleans()), draw(CONTENTS), (f"m{draw(st.integers(0, 50))}",),
                      draw(st.sampled_from(["raw", "topic-summary"])), "topic 1", "other", MappingProxyType(meta))


# an edit between two steps: append some items, replace one, drop some from the end, or keep all
EDITS = st.lists(st.tuples(st.sampled_from(["append", "replace", "drop", "same", "rebuild"]),
                           st.lists(items(), max_size=4), st.integers(0, 30)), min_size=1, max_size=6)


def _apply(history: list[OutputItem], edit: tuple[str, list[OutputItem], int]) -> list[OutputItem]:
    kind, new, at = edit
    if kind == "append":
        return history + new
    if kind == "replace" and history and new:
        i = at % len(history)
        return history[:i] + [new[0]] + history[i + 1:]
    if kind == "drop":
        return history[:max(0, len(history) - 1 - at % 3)]
    if kind == "rebuild":  # equal but new objects, as summaries are rebuilt every step
        return [OutputItem(i.ai, i.content, i.message_ids, i.origin, i.where, i.kind, i.metadata) for i in history]
    return list(history)


@settings(max_examples=150, deadline=None)
@given(st.lists(items(), max_size=8), EDITS, st.booleans())
def test_incremental_equals_from_scratch(start: list[OutputItem], edits: list[Any], with_extras: bool) -> None:
    counter = TokenCounter(fn=len)
    composer = composition.Composer()
    history = start
    for edit in [("same", [], 0), *edits]:
        history = _apply(history, edit)
        ld = LoopData(system=["S1", "S2"], history_output=list(history), extras_persistent={"k": "v"})
        extras = composition.extras_text(ld)
        message = '[EXTRAS] {"k": "v"}' if with_extras else None
        got = composer.build(ld, message, extras, counter)
        assert got == composition.build(ld, message, extras, counter)
        for message in got[0]:  # a caller's edits must not reach the next step
            if isinstance(message["content"], list):
                message["content"].append({"type": "text", "text": "added by a caller"})
        got[0][-1]["content"] = "replaced by a caller"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(items(), max_size=6), min_size=1, max_size=5))
def test_incremental_messages_match_to_chat_messages(chunks: list[list[OutputItem]]) -> None:
    inc, history = IncrementalMessages(), []
    for chunk in chunks:
        history = history + chunk
        assert inc.convert(history, "SYS") == to_chat_messages(history, "SYS")
        assert inc.convert(history[::-1], None) == to_chat_messages(history[::-1])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.lists(items(), max_size=4), st.integers(0, 3), st.one_of(st.none(), items()),
                          st.booleans()), min_size=1, max_size=6))
def test_incremental_messages_with_an_extra_item_and_a_given_prefix(steps: list[Any]) -> None:
    """`extra` converts as if it ended the items; a given prefix (the composer's) or none gives the same."""
    inc, history, last = IncrementalMessages(), [], []
    for chunk, drop, extra, give in steps:
        history = history[:max(0, len(history) - drop)] + chunk
        prefix = next((i for i, (a, b) in enumerate(zip(last, history)) if a is not b), min(len(last), len(history)))
        got = inc.convert(history, "SYS", prefix if give else None, extra)
        assert got == to_chat_messages(history + ([extra] if extra is not None else []), "SYS")
        for message in got:
            message["content"] = "edited by a caller"
        last = history


def test_the_extras_item_is_reused_only_while_the_extras_message_is_the_same() -> None:
    composer, counter = composition.Composer(), TokenCounter(fn=len)
    history = [OutputItem(True, "a", ("m1",), "raw", "topic 1", "other")]
    for i, value in enumerate(["one", "one", "two", "one", "two"]):
        history = history + [OutputItem(False, f"r{i}", (f"u{i}",), "raw", "topic 1", "other"),
                             OutputItem(True, f"a{i}", (f"a{i}",), "raw", "topic 1", "other"),
                             OutputItem(False, f"r{i}", (f"r{i}",), "raw", "topic 1", "other")]
        ld = LoopData(system=["S"], history_output=list(history), extras_temporary={"k": value})
        message = f"[EXTRAS] {value}"
        got = composer.build(ld, message, composition.extras_text(ld), counter)
        assert got == composition.build(ld, message, composition.extras_text(ld), counter)
        assert got[0][-1]["content"] == f"r{i}\n{message}"
        assert [p.text for p in got[1] if p.kind == "extras"] == [value]


def test_parts_made_fast_are_parts() -> None:
    from a0nb.engine.records import Part, new_part
    args = ("history", "history: topic 1", "text", 3, 2, "raw topic 1, messages m1", ("f",), "ext", "raw", ("o",))
    part = new_part(*args)  # type: ignore[arg-type]
    assert part == Part(*args) and hash(part) == hash(Part(*args)) and repr(part) == repr(Part(*args))  # type: ignore[arg-type]
    moved = part.at(5)
    assert moved == Part(*args[:4], 5, *args[5:]) and part.message_index == 2  # type: ignore[arg-type]


def test_a_history_part_is_counted_when_its_count_is_first_read_by_the_rule_it_was_made_under() -> None:
    """History parts count their text when the count is first read (the loop never reads it): the same value,
    and the same part in every other way, as a part counted when made; by the counting rule of the call that
    made it, whatever the counter's rule is by then; each by its own text, once."""
    from dataclasses import asdict, replace
    from a0nb.engine.records import Part, lazy_part, new_part
    counted: list[str] = []
    counter = TokenCounter(fn=lambda text: counted.append(text) or len(text))
    args = ("history", "history: topic 1", "some text", 2, "raw topic 1, messages m1", (), "", "raw", ())
    part = lazy_part(args[0], args[1], args[2], counter, *args[3:])  # type: ignore[arg-type]
    eager = Part(args[0], args[1], args[2], 9, *args[3:])  # type: ignore[arg-type]
    assert counted == [] and part.at(4).message_index == 4 and counted == []
    assert part == eager and hash(part) == hash(eager) and repr(part) == repr(eager) and asdict(part) == asdict(eager)
    assert part.tokens == 9 and counted == ["some text"]  # once: then held as any part's count is
    assert replace(part, text="masked").tokens == 9 and counted == ["some text"]  # a masked copy keeps the count
    other = lazy_part("history", "h", "other text!", counter, 1)
    counter.fn = lambda text: 1000  # a new rule after the part was made: it counts by the one it was made under
    assert other.tokens == 11 and other == new_part("history", "h", "other text!", 11, 1)
    assert lazy_part("history", "h", "new rule", counter, 1).tokens == 1000


def test_history_parts_count_as_the_counter_counts_in_a_composed_call() -> None:
    history = [OutputItem(i % 2 == 1, f"message {i} " * (i + 1), (f"m{i}",), "raw", "topic 1", "other") for i in range(6)]
    counter = TokenCounter(fn=lambda text: len(text.split()))
    ld = LoopData(system=["S"], history_output=history)
    parts = composition.Composer().build(ld, None, {}, counter)[1]
    assert [p.tokens for p in parts if p.kind == "history"] == [2 * (i + 1) for i in range(6)]
    ld.history_output = history[:3] + [OutputItem(True, "changed", ("m3",), "raw", "topic 1", "other")]
    composer = composition.Composer()
    composer.build(ld, None, {}, counter)
    ld.history_output = history[:3] + [OutputItem(True, "changed again now", ("m3",), "raw", "topic 1", "other")]
    assert [p.tokens for p in composer.build(ld, None, {}, counter)[1] if p.kind == "history"] == [2, 4, 6, 3]


def test_unchanged_prefix_is_not_converted_again() -> None:
    class Counting(OutputItem):  # counts reads of `content`: a converted item is read once
        reads = 0

        def __getattribute__(self, name: str) -> Any:
            if name == "content":
                type(self).reads += 1
            return super().__getattribute__(name)

    history = [Counting(i % 2 == 1, f"message {i}", (f"m{i}",), "raw", "topic 1", "other") for i in range(100)]
    composer, counter = composition.Composer(), TokenCounter(fn=len)
    ld = LoopData(system=["S"], history_output=history)
    composer.build(ld, None, {}, counter)
    Counting.reads = 0
    ld.history_output = history + [Counting(False, "new", ("m100",), "raw", "topic 1", "other")]
    messages, parts = composer.build(ld, None, {}, counter)
    assert Counting.reads <= 6  # the new item and the last message it may merge with, not all 101
    assert messages == to_chat_messages(ld.history_output, "S") and len(parts) == 102


def test_the_message_the_extras_ended_is_kept_for_the_next_call() -> None:
    """The extras are merged into the result only: at the next call the last message is neither converted nor
    copied again when what follows starts another message, and a caller's edit of the merged one reaches nothing."""
    inc = IncrementalMessages()
    extra = OutputItem(False, "[EXTRAS] e", (), "raw", "extras", "extras")
    history = [OutputItem(i % 2 == 1, f"message {i}", (f"m{i}",), "raw", "topic 1", "other") for i in range(5)]
    first = inc.convert(history, "S", 0, extra)
    assert first == to_chat_messages(history + [extra], "S") and first[-1]["content"] == "message 4\n[EXTRAS] e"
    first[-1]["content"] = "edited by a caller"
    history = history + [OutputItem(True, "reply", ("m5",), "raw", "topic 1", "other"),
                         OutputItem(False, "result", ("m6",), "raw", "topic 1", "other")]
    second = inc.convert(history, "S", 5, extra)
    assert second == to_chat_messages(history + [extra], "S")
    assert inc._kept == 5 and second[5] is inc._handed[4]  # (system first) item 4's message: kept, not copied


def test_system_sections_are_reused_only_while_text_sources_origin_and_rule_are_the_same() -> None:
    """The system message and the section parts are kept from the last call only while every section's
    text, source files and extension, and the counting rule, are as they were."""
    class Origin:
        def __init__(self, name: str) -> None:
            self.name, self.root_label, self.path = name, "bundled", f"{name}.py"

    class Src:
        def __init__(self, name: str) -> None:
            self.name, self.label, self.overrode = name, "bundled", ()

    composer, history = composition.Composer(), [OutputItem(False, "hi", ("m1",), "raw", "topic 1", "user")]
    one, two = Origin("_10_main_prompt"), Origin("_11_tools_prompt")
    steps = [
        (["A", "B"], {0: one, 1: two}, len),
        (["A", "B"], {0: one, 1: two}, len),  # unchanged: reused
        (["A", "B2"], {0: one, 1: two}, len),  # a text changed
        (["A", composition.Section("B2", (Src("tools.md"),))], {0: one, 1: two}, len),  # its sources changed
        (["A", composition.Section("B2", (Src("tools.md"),))], {0: one, 1: one}, len),  # its extension changed
        (["A", composition.Section("B2", (Src("tools.md"),))], {0: one, 1: one}, lambda t: 2 * len(t)),  # rule
        (["A", composition.Section("B2", (Src("other.md"),))], {0: one, 1: one}, lambda t: 2 * len(t)),
    ]
    rules: dict[int, TokenCounter] = {}
    made: list[tuple[Any, ...]] = []
    for system, origins, fn in steps:
        counter = rules.setdefault(id(fn), TokenCounter(fn=fn))
        ld = LoopData(system=list(system), history_output=list(history))
        ld.system_origin = dict(origins)
        got = composer.build(ld, None, {}, counter)
        assert got == composition.build(ld, None, {}, counter)
        made.append((got[0][0]["content"], *got[1][:2]))
        got[0][0]["content"] = "edited by a caller"  # the caller's message, not the kept text
        got[1].clear()
    assert all(a is b for a, b in zip(made[0], made[1]))  # the unchanged step: the same text and parts
    assert all(made[i][2] is not made[i + 1][2] for i in range(1, len(made) - 1))  # each change: a new part


def test_fresh_messages_are_the_callers_own() -> None:
    class Custom(dict):  # kept as it is: a copy would lose its class
        pass

    texts = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "name": "x"}]
    mixed = [*texts, {"role": "user", "content": [{"type": "text", "text": "c"}]}, Custom(role="user", content="d")]
    for given in (texts, mixed):
        got = fresh_messages(given)
        assert got == given and all(a is not b for a, b in zip(got, given) if a.__class__ is dict)
        for a, b in zip(got, given):
            if isinstance(b.get("content"), list):
                assert a["content"] is not b["content"]
    assert fresh_messages(mixed)[3] is mixed[3]


def test_a_section_joined_with_plus_keeps_the_files_of_both() -> None:
    a, b = composition.Section("A", ["a.md"]), composition.Section("B", ["b.md"])
    joined = a + "\n\n" + b
    assert joined == "A\n\nB" and joined.sources == ("a.md", "b.md")
    prefixed = "x: " + a
    assert prefixed == "x: A" and prefixed.sources == ("a.md",)
    text = a
    text += "!"
    assert text == "A!" and text.sources == ("a.md",) and isinstance(text, str)
