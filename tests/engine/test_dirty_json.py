"""Tests for the tolerant JSON parser: upstream cases (§8.2 items 1-3), each tolerance, streaming."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a0nb.engine.dirty_json import MAX_DEPTH, DirtyJson, parse_dirty, try_parse

TOOL = '{"tool_name":"x","tool_args":{}}'


def feed_all(text: str) -> DirtyJson:
    parser = DirtyJson()
    parser.feed(text)
    return parser


# -- §8.2 items 1-3 ------------------------------------------------------------------------------


def test_complete_object_is_completed() -> None:
    parser = DirtyJson()
    assert parser.feed(TOOL) == {"tool_name": "x", "tool_args": {}}
    assert parser.completed is True


def test_complete_list_is_completed() -> None:
    parser = DirtyJson()
    assert parser.feed("[1, 2, 3]") == [1, 2, 3]
    assert parser.completed is True


def test_missing_final_brace_gives_partial_dict_not_completed() -> None:
    parser = DirtyJson()
    assert parser.feed(TOOL[:-1]) == {"tool_name": "x", "tool_args": {}}
    assert parser.completed is False


def test_trailing_noise_after_completion_is_ignored() -> None:
    parser = DirtyJson()
    parser.feed(TOOL)
    assert parser.feed(" trailing noise") == {"tool_name": "x", "tool_args": {}}
    assert parser.completed is True
    assert parser.end == len(TOOL)


# -- tolerances ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{a: 1, b_c: 2}", {"a": 1, "b_c": 2}),
        ("{'a': 'single'}", {"a": "single"}),
        ("{`a`: `back tick`}", {"a": "back tick"}),
        ('{"a": """\n  line 1\n  line 2\n"""}', {"a": "line 1\n  line 2"}),
        ("{'a': '''  x  '''}", {"a": "x"}),
        ("{a: ```\ncode\n```}", {"a": "code"}),
        ("{a: hello world , b: 2}", {"a": "hello world", "b": 2}),
        ("{a: hello]", {"a": "hello"}),
        ('{"a": 1, // note\n "b": 2}', {"a": 1, "b": 2}),
        ('{"a": /* block\n comment */ 1}', {"a": 1}),
        ('{"a": [1, 2, ], "b": 3, }', {"a": [1, 2], "b": 3}),
        ("[TRUE, False, NULL, undefined, None]", [True, False, None, None, None]),
        ("[+5, +1.5, -2, .5, 1e3]", [5, 1.5, -2, 0.5, 1000.0]),
        (r'["\u0041\u00e9", "\ud83d\ude00"]', ["Aé", "\U0001F600"]),
        (r'["bad \uZZ escape"]', ["bad \\uZZ escape"]),
        (r"['it\'s', 'tab\there']", ["it's", "tab\there"]),
        ('{"a": {"b": [1, {"c": "d', {"a": {"b": [1, {"c": "d"}]}}),
        ('{{"a": 1}}', {"a": 1}),
        ('prose first {"a": 1} then more', {"a": 1}),
        ('noise [1, 2] {"a": 1}', [1, 2]),
        ('  "a string root" rest', "a string root"),
        ('{"a": 1 "b": 2}', {"a": 1, "b": 2}),
        ('{"a" 1}', {"a": 1}),
        ('{"a": }', {"a": None}),
        ('{"a"}', {"a": None}),
        ('{"a": [1, 2}', {"a": [1, 2]}),
        ('{"a": 1}]', {"a": 1}),
        ("{a: 1.2.3}", {"a": "1.2.3"}),
        ("{a: 12abc}", {"a": "12abc"}),
        ('{"a": "line\nbreak\ttab"}', {"a": "line\nbreak\ttab"}),
    ],
)
def test_tolerances(text: str, expected: object) -> None:
    assert parse_dirty(text) == expected


def test_partial_values_at_end_of_input() -> None:
    assert parse_dirty('{"a": "hel') == {"a": "hel"}
    assert parse_dirty('{"a": 12') == {"a": 12}
    assert parse_dirty('{"a": tr') == {"a": "tr"}
    assert parse_dirty('{"a": true') == {"a": True}
    assert parse_dirty('{"a":') == {"a": None}
    assert parse_dirty('{"a": 1, "b') == {"a": 1}
    assert parse_dirty('[1, "x\\') == [1, "x"]
    assert parse_dirty('{"a": """multi') == {"a": "multi"}


def test_nothing_parseable_is_none() -> None:
    assert parse_dirty("") is None
    assert parse_dirty("just words, no brackets") is None
    assert parse_dirty("123") is None


def test_completed_only_when_root_closed() -> None:
    assert feed_all('{"a": [1, 2]}').completed
    assert not feed_all('{"a": [1, 2]').completed
    assert not feed_all('{"a": "}').completed
    assert feed_all('"closed string"').completed


def test_end_points_past_root_including_doubled_brace() -> None:
    assert feed_all('{"a": 1}  rest').end == 8
    assert feed_all('xx {{"a": 1}} rest').end == 13


def test_deep_nesting_does_not_recurse() -> None:
    parser = DirtyJson()
    value = parser.feed("[" * 10_000)
    assert parser.too_deep and not parser.completed
    assert isinstance(value, list)
    deep = parse_dirty("[" * 10_000 + "]" * 10_000)
    assert deep is None or isinstance(deep, list)


def test_max_depth_is_exact() -> None:
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert feed_all(ok).completed
    assert feed_all("[" + ok + "]").too_deep


# -- streaming -----------------------------------------------------------------------------------


def test_feed_one_character_at_a_time_matches_whole() -> None:
    text = '{thoughts: ["a", \'b\'], /* c */ "x": [1, +2.5e1, true, null], "s": """ t """, u: bare word}'
    parser = DirtyJson()
    for char in text:
        parser.feed(char)
    assert parser.completed
    assert parser.value == parse_dirty(text)


def test_partial_value_grows_while_streaming() -> None:
    parser = DirtyJson()
    assert parser.feed('{"text": "Hel') == {"text": "Hel"}
    assert parser.feed("lo") == {"text": "Hello"}
    assert parser.feed('", "n": 1') == {"text": "Hello", "n": 1}
    assert parser.feed("0}") == {"text": "Hello", "n": 10}
    assert parser.completed


def test_escape_split_across_chunks() -> None:
    parser = DirtyJson()
    parser.feed('["a\\')
    parser.feed("u00")
    assert parser.feed('41"]') == ["aA"]


def test_empty_string_versus_triple_quote_split() -> None:
    parser = DirtyJson()
    parser.feed('{"a": ""')
    assert parser.feed("}") == {"a": ""}
    parser = DirtyJson()
    parser.feed('{"a": ""')
    assert parser.feed('"x"""}') == {"a": "x"}


def test_duplicate_key_restored_between_feeds() -> None:
    parser = DirtyJson()
    assert parser.feed('{"a": 1, "a": "pa') == {"a": "pa"}
    assert parser.feed('rt"}') == {"a": "part"}


def test_long_string_streamed_in_small_chunks() -> None:
    body = r"line \\ with \"quotes\" \u00e9 and \ud83d\ude00 " * 400
    text = '{"code": "' + body + '", "n": 1}'
    parser = DirtyJson()
    seen = []
    for at in range(0, len(text), 7):
        value = parser.feed(text[at:at + 7])
        if isinstance(value, dict) and isinstance(value.get("code"), str):
            seen.append(len(value["code"]))
    assert parser.completed
    assert parser.value == json.loads(text)
    assert seen == sorted(seen)  # the partial string only grows


@given(
    st.lists(st.sampled_from(["a", "\\\\", "\\u00e9", "\\ud83d", "\\ude00", "\\n", "\\\"", "é"]), max_size=30),
    st.integers(1, 9),
)
@settings(max_examples=300)
def test_streamed_escapes_partial_is_a_prefix_of_final(pieces: list[str], step: int) -> None:
    text = '["' + "".join(pieces) + '"]'
    parser = DirtyJson()
    partials = []
    for at in range(0, len(text), step):
        value = parser.feed(text[at:at + step])
        if value:
            partials.append(value[0])
    final = json.loads(text)[0]
    assert parser.value == [final]
    assert all(final.startswith(p) for p in partials)


def test_surrogate_pair_split_across_feeds() -> None:
    parser = DirtyJson()
    parser.feed('["\\ud83d')
    parser.feed('\\ude00"]')
    assert parser.value == ["\U0001F600"]


def test_comment_like_prose_before_root_is_ignored() -> None:
    assert parse_dirty('see http://example.com // {"a": 1}') == {"a": 1}
    assert parse_dirty('/* {"a": 1}') == {"a": 1}


def test_try_parse_strict_then_dirty() -> None:
    assert try_parse('{"a": [1, 2]}') == {"a": [1, 2]}
    assert try_parse("{a: [1, 2,],}") == {"a": [1, 2]}
    assert try_parse("nothing") is None
    assert isinstance(try_parse("[" * 5000 + "]" * 5000), list)  # json.loads recursion falls back


# -- properties ----------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.text())
@settings(max_examples=300)
def test_parse_dirty_never_raises(text: str) -> None:
    parse_dirty(text)


@given(st.text(alphabet='{}[]"\'`:,/*\\ \nabtru0123.+-eE'))
@settings(max_examples=500)
def test_parse_dirty_never_raises_on_json_like_noise(text: str) -> None:
    parse_dirty(text)


@given(json_values.filter(lambda v: isinstance(v, (dict, list))), st.booleans())
@settings(max_examples=300)
def test_valid_json_parses_exactly_like_json(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    parser = DirtyJson()
    assert parser.feed(text) == json.loads(text)
    assert parser.completed and parser.end == len(text)


@given(json_values.filter(lambda v: isinstance(v, (dict, list))), st.data())
@settings(max_examples=200)
def test_any_chunking_gives_the_same_value(value: object, data: st.DataObject) -> None:
    text = json.dumps(value, indent=data.draw(st.sampled_from([None, 1])))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    parser = DirtyJson()
    for a, b in zip([0, *cuts], [*cuts, len(text)]):
        parser.feed(text[a:b])
    assert parser.value == json.loads(text)
    assert parser.completed


@given(st.text(alphabet='{}[]"\'`:,/*\\ \nabtru0123.+-eE'), st.data())
@settings(max_examples=500)
def test_chunked_noise_equals_whole_noise(text: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    parser = DirtyJson()
    for a, b in zip([0, *cuts], [*cuts, len(text)]):
        parser.feed(text[a:b])
    whole = feed_all(text)
    assert (parser.value, parser.completed, parser.end) == (whole.value, whole.completed, whole.end)


def test_infinity_keywords() -> None:
    assert parse_dirty("[Infinity, -Infinity]") == [math.inf, -math.inf]
