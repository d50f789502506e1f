"""Tests for reply → ToolRequest: first-closed-object (§8.2 item 4), validation, every misformat
class, aliases, native tool calls, and never-raising properties."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a0nb.engine.dirty_json import parse_dirty
from a0nb.errors import Misformat, RepairableError
from a0nb.engine.extract import ToolRequest, first_closed_object, parse_tool_request, tool_request_from_native

OBJECT = '{"tool_name":"response","tool_args":{"text":"brace } inside"}}'


def ok(text: str) -> ToolRequest:
    result = parse_tool_request(text)
    assert isinstance(result, ToolRequest), getattr(result, "args", result)
    return result


def bad(text: str) -> Misformat:
    result = parse_tool_request(text)
    assert isinstance(result, Misformat), result
    assert isinstance(result, RepairableError)
    assert result.raw == text
    message = str(result)
    assert "JSON object" in message and "tool_name" in message  # says what to send instead
    return result


# -- first_closed_object (§8.2 item 4) -----------------------------------------------------------


def test_first_closed_object_ignores_brace_inside_string() -> None:
    found = first_closed_object(f"prefix {OBJECT} trailing noise")
    assert found == OBJECT
    assert parse_dirty(found)["tool_args"]["text"] == "brace } inside"


def test_first_closed_object_unterminated_is_none() -> None:
    assert first_closed_object('{"tool_name":"response","tool_args":{"text":"x"}') is None
    assert first_closed_object('{"text": "open string }') is None


def test_first_closed_object_bracket_first_is_none() -> None:
    assert first_closed_object('[{"tool_name":"x"}]') is None
    assert first_closed_object('see [1] then {"a": 1}') is None


def test_first_closed_object_edge_cases() -> None:
    assert first_closed_object("no braces") is None
    assert first_closed_object('{"a": 1} {"b": 2}') == '{"a": 1}'
    assert first_closed_object("{'a': '}'} x") == "{'a': '}'}"
    assert first_closed_object('x {"a": [1, ["]"]]} y') == '{"a": [1, ["]"]]}'


# -- valid requests ------------------------------------------------------------------------------


def test_full_request() -> None:
    text = json.dumps(
        {"thoughts": ["one", "two"], "headline": "Answering", "tool_name": "response",
         "tool_args": {"text": "hi"}}
    )
    request = ok(text)
    assert request == ToolRequest("response", None, {"text": "hi"}, ("one", "two"), "Answering", text)
    assert request.full_name == "response"


def test_method_split() -> None:
    request = ok('{"tool_name": "skills_tool:load", "tool_args": {"skill_name": "pdf"}}')
    assert (request.tool_name, request.method, request.full_name) == ("skills_tool", "load", "skills_tool:load")
    assert ok('{"tool_name": "a:b:c"}').method == "b:c"
    assert ok('{"tool_name": " text_editor : read "}').full_name == "text_editor:read"
    assert ok('{"tool_name": "x:"}').method is None


@pytest.mark.parametrize(
    "text",
    [
        '{"tool_name": "t", "tool_args": {}}',
        '{"tool_name": "t"}',
        '{"tool_name": "t", "tool_args": null}',
    ],
)
def test_empty_or_missing_tool_args_is_valid(text: str) -> None:
    assert ok(text).tool_args == {}


def test_aliases() -> None:
    request = ok('{"tool": "memory_load", "args": {"query": "q"}}')
    assert (request.tool_name, request.tool_args) == ("memory_load", {"query": "q"})
    both = ok('{"tool_name": "a", "tool": "b", "tool_args": {"x": 1}, "args": {"y": 2}}')
    assert (both.tool_name, both.tool_args) == ("a", {"x": 1})


def test_thoughts_shapes() -> None:
    assert ok('{"tool_name": "t", "thoughts": "single"}').thoughts == ("single",)
    assert ok('{"tool_name": "t", "thoughts": ["a", 2, null]}').thoughts == ("a", "2")
    assert ok('{"tool_name": "t"}').thoughts == ()
    assert ok('{"tool_name": "t", "headline": 5}').headline == "5"


def test_trailing_prose_dropped_and_raw_is_the_object() -> None:
    request = ok(f"Sure! Here it is:\n```json\n{OBJECT}\n```\nHope that helps.")
    assert request.raw == OBJECT
    assert request.tool_args == {"text": "brace } inside"}


def test_two_objects_first_wins() -> None:
    request = ok('{"tool_name": "first"} {"tool_name": "second"}')
    assert (request.tool_name, request.raw) == ("first", '{"tool_name": "first"}')


def test_dirty_object_and_raw() -> None:
    text = "{tool_name: 'response', tool_args: {text: 'hi',},} // done"
    request = ok(text)
    assert (request.tool_name, request.tool_args) == ("response", {"text": "hi"})
    assert request.raw == "{tool_name: 'response', tool_args: {text: 'hi',},}"


def test_unclosed_object_falls_back_to_dirty_parse() -> None:
    request = ok('{"tool_name": "response", "tool_args": {"text": "cut off')
    assert request.tool_args == {"text": "cut off"}
    assert request.raw == '{"tool_name": "response", "tool_args": {"text": "cut off'


def test_bracket_before_object_still_parses() -> None:
    assert ok('[Thinking] {"tool_name": "t"}').tool_name == "t"
    assert ok('note [1] then {"tool_name": "t"}').tool_name == "t"


def test_control_characters_in_arguments() -> None:
    text = '{"tool_name": "code", "tool_args": {"code": "a\tb\nc\x01d\x00"}}'
    assert ok(text).tool_args["code"] == "a\tb\nc\x01d\x00"


def test_megabyte_arguments() -> None:
    payload = "x = 1\n" * 180_000
    text = json.dumps({"tool_name": "code", "tool_args": {"code": payload}}) + " trailing"
    assert ok(text).tool_args["code"] == payload
    dirty = "{tool_name: code, tool_args: {code: '" + payload.replace("\n", "\\n") + "'}} trailing"
    assert ok(dirty).tool_args["code"] == payload


def test_doubled_braces_from_template_escaping() -> None:
    request = ok('{{"tool_name": "t", "tool_args": {"a": 1}}} after')
    assert (request.tool_args, request.raw) == ({"a": 1}, '{{"tool_name": "t", "tool_args": {"a": 1}}}')


def test_xml_wrapper_around_valid_object_is_accepted() -> None:
    assert ok('<tool_call>{"tool_name": "t", "tool_args": {}}</tool_call>').tool_name == "t"


# -- misformats ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_reply(text: str) -> None:
    assert "empty" in str(bad(text))


def test_no_json_object() -> None:
    assert "no JSON object" in str(bad("I will now answer the user in plain prose."))
    assert "no JSON object" in str(bad('"response"'))


@pytest.mark.parametrize(
    "text", ['[{"tool_name": "t", "tool_args": {}}]', "[1, 2]", '```json\n[{"tool_name": "t"}]\n```', "[{"]
)
def test_array_at_top_level(text: str) -> None:
    assert "array" in str(bad(text))


def test_missing_tool_name() -> None:
    message = str(bad('{"thoughts": ["x"], "tool_args": {"text": "hi"}}'))
    assert 'no "tool_name"' in message


@pytest.mark.parametrize("name", ['""', '"   "', '":load"'])
def test_empty_tool_name(name: str) -> None:
    assert "empty" in str(bad('{"tool_name": ' + name + "}"))


@pytest.mark.parametrize(("name", "kind"), [("42", "number"), ('["a"]', "list"), ("true", "boolean")])
def test_non_string_tool_name(name: str, kind: str) -> None:
    assert kind in str(bad('{"tool_name": ' + name + "}"))


@pytest.mark.parametrize(("args", "kind"), [('"text"', "string"), ("[1]", "list"), ("3", "number")])
def test_non_dict_tool_args(args: str, kind: str) -> None:
    message = str(bad('{"tool_name": "t", "tool_args": ' + args + "}"))
    assert '"tool_args" must be a JSON object' in message and kind in message


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "response", "arguments": {"text": "hi"}}</tool_call>',
        '<invoke name="response"><parameter name="text">hi</parameter></invoke>',
        "<function=response>hello</function>",
    ],
)
def test_xml_style_tool_call(text: str) -> None:
    message = str(bad(text))
    assert "XML" in message and "one JSON object instead" in message


def test_too_deep_is_misformat() -> None:
    text = '{"tool_name": "t", "tool_args": {"a": ' + "[" * 5000 + "]" * 5000 + "}}"
    assert "nested" in str(bad(text))


def test_non_string_input_does_not_raise() -> None:
    assert isinstance(parse_tool_request(None), Misformat)  # type: ignore[arg-type]


# -- native tool calls ---------------------------------------------------------------------------


def native(name: object, arguments: object) -> list[dict[str, object]]:
    return [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}]


def test_native_tool_call() -> None:
    calls = native("skills_tool:load", '{"skill_name": "pdf"}')
    calls.append({"id": "call_2", "type": "function", "function": {"name": "other", "arguments": "{}"}})
    request = tool_request_from_native(calls)
    assert isinstance(request, ToolRequest)
    assert (request.full_name, request.tool_args) == ("skills_tool:load", {"skill_name": "pdf"})
    assert json.loads(request.raw)["id"] == "call_1"


@pytest.mark.parametrize("arguments", ["", "  ", None, "{}", {}])
def test_native_empty_arguments_valid(arguments: object) -> None:
    request = tool_request_from_native(native("t", arguments))
    assert isinstance(request, ToolRequest) and request.tool_args == {}


def test_native_dirty_and_dict_arguments() -> None:
    assert tool_request_from_native(native("t", "{a: 1,}")).tool_args == {"a": 1}  # type: ignore[union-attr]
    assert tool_request_from_native(native("t", {"a": 1})).tool_args == {"a": 1}  # type: ignore[union-attr]


def test_native_sdk_objects() -> None:
    class Function:
        name = "t"
        arguments = '{"a": 1}'

    class Call:
        function = Function()

    request = tool_request_from_native([Call()])  # type: ignore[list-item]
    assert isinstance(request, ToolRequest) and request.tool_args == {"a": 1}


@pytest.mark.parametrize(
    "calls", [[], native("", "{}"), native(None, "{}"), native("t", "[1, 2]"), native("t", "not json"), native("t", 5)]
)
def test_native_misformats(calls: list[dict[str, object]]) -> None:
    assert isinstance(tool_request_from_native(calls), Misformat)


# -- properties ----------------------------------------------------------------------------------


@given(st.text())
@settings(max_examples=300)
def test_parse_tool_request_never_raises(text: str) -> None:
    assert isinstance(parse_tool_request(text), (ToolRequest, Misformat))


@given(st.text(alphabet='{}[]"\':,/*\\ \ntool_namergs<>ae0123'))
@settings(max_examples=500)
def test_parse_tool_request_never_raises_on_json_like_noise(text: str) -> None:
    result = parse_tool_request(text)
    assert isinstance(result, (ToolRequest, Misformat))
    if isinstance(result, ToolRequest):
        assert result.tool_name and isinstance(result.tool_args, dict)


@given(st.text(min_size=1), st.dictionaries(st.text(), st.text() | st.integers()), st.text())
@settings(max_examples=200)
def test_valid_request_survives_surrounding_prose(name: str, args: dict[str, object], prose: str) -> None:
    obj = json.dumps({"tool_name": name, "tool_args": args})
    result = parse_tool_request("Here: " + obj + " " + prose)
    if name.split(":")[0].strip():
        assert isinstance(result, ToolRequest)
        assert (result.tool_args, result.raw) == (args, obj)
    else:
        assert isinstance(result, Misformat)


def test_a_parsed_request_is_the_dataclass_its_constructor_makes() -> None:
    """`_validate` fills the frozen ToolRequest without its __init__: the same fields, in the same order, equal to
    the constructor's, and still frozen."""
    import dataclasses

    raw = '{"thoughts": ["a", 2], "headline": "h", "tool_name": " x : m ", "tool_args": {"k": [1]}}'
    got = parse_tool_request(raw)
    want = ToolRequest(tool_name="x", method="m", tool_args={"k": [1]}, thoughts=("a", "2"), headline="h", raw=raw)
    assert isinstance(got, ToolRequest) and got == want and repr(got) == repr(want)
    assert list(vars(got)) == list(vars(want)) == [f.name for f in dataclasses.fields(ToolRequest)]
    assert dataclasses.replace(got, headline="z").headline == "z" and got.full_name == "x:m"
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.tool_name = "y"  # type: ignore[misc]
