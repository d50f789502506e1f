"""Writes the bad-reply corpus: one model reply per file in tests/corpus/replies/ (NNN_slug.txt, UTF-8,
newlines kept as written). Run it again after editing the list; stale files are removed first."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "replies"


def call(tool: Any, args: Any = None, **extra: Any) -> str:
    """A reply shaped like a tool request, with whatever (possibly wrong) types are given."""
    body: dict[str, Any] = {"thoughts": ["I will do it."], "headline": "Working", "tool_name": tool,
                            "tool_args": {} if args is None else args}
    body.update(extra)
    return json.dumps(body, ensure_ascii=False)


def answer(text: Any = "done") -> str:
    return call("response", {"text": text})


def code(runtime: str, source: str) -> str:
    return call("code_execution", {"runtime": runtime, "code": source})


GOOD = answer("the corpus answer")
MEDIUM = call("response", {"text": "a reply long enough to cut at many places " * 3})


def truncated() -> list[tuple[str, str]]:
    out = [(f"truncated_at_{pct}pct", MEDIUM[: len(MEDIUM) * pct // 100]) for pct in (5, 25, 50, 75, 90, 99)]
    out += [
        ("truncated_after_key", '{"thoughts": ["x"], "tool_name"'),
        ("truncated_after_colon", '{"thoughts": ["x"], "tool_name": '),
        ("truncated_inside_name", '{"thoughts": ["x"], "tool_name": "resp'),
        ("truncated_inside_args", '{"tool_name": "response", "tool_args": {"text": "half an ans'),
        ("truncated_open_brace_only", "{"),
        ("truncated_escape", '{"tool_name": "response", "tool_args": {"text": "a\\'),
        ("truncated_unicode_escape", '{"tool_name": "response", "tool_args": {"text": "\\u00'),
        ("truncated_code_call", code("python", "print(1)\nprint(2)")[:-20]),
    ]
    return out


def prose() -> list[tuple[str, str]]:
    return [
        ("prose_before", "Sure! Here is my tool call:\n" + GOOD),
        ("prose_after", GOOD + "\nLet me know if you need anything else."),
        ("prose_both_sides", "Thinking... ok.\n" + GOOD + "\nDone."),
        ("prose_only", "I think the answer is 42, but I am not sure which tool to use."),
        ("prose_with_braces_in_text", "Use a set like {a, b} then " + GOOD),
        ("prose_json_in_sentence", 'I would call {"tool_name": "response"} but I will not.'),
        ("prose_bracket_note_then_json", "[note] " + GOOD),
        ("prose_long_preamble", "word " * 5000 + GOOD),
    ]


def two_objects() -> list[tuple[str, str]]:
    return [
        ("two_objects_adjacent", GOOD + GOOD),
        ("two_objects_newline", call("code_execution", {"runtime": "python", "code": "1+1"}) + "\n" + GOOD),
        ("two_objects_prose_between", GOOD + "\nand then\n" + answer("second")),
        ("two_objects_first_invalid", '{"thoughts": ["no tool"]}\n' + GOOD),
        ("two_objects_first_valid_second_broken", GOOD + '\n{"tool_name": '),
        ("two_objects_comma_separated", GOOD + ",\n" + answer("second")),
    ]


def arrays() -> list[tuple[str, str]]:
    return [
        ("array_of_one_call", "[" + GOOD + "]"),
        ("array_of_two_calls", "[" + GOOD + ", " + answer("b") + "]"),
        ("array_empty", "[]"),
        ("array_of_numbers", "[1, 2, 3]"),
        ("array_nested", "[[[" + GOOD + "]]]"),
        ("array_fenced", "```json\n[" + GOOD + "]\n```"),
        ("array_unclosed", "[" + GOOD),
        ("array_of_strings", '["tool_name", "response"]'),
    ]


def wrong_types() -> list[tuple[str, str]]:
    return [
        ("tool_name_number", call(42)),
        ("tool_name_float", call(3.5)),
        ("tool_name_list", call(["response"])),
        ("tool_name_null", call(None)),
        ("tool_name_bool", call(True)),
        ("tool_name_object", call({"name": "response"})),
        ("tool_name_empty", call("")),
        ("tool_name_whitespace", call("   ")),
        ("tool_name_colon_only", call(":")),
        ("tool_args_string", call("response", "the answer")),
        ("tool_args_list", call("response", ["the", "answer"])),
        ("tool_args_number", call("response", 7)),
        ("tool_args_bool", call("response", False)),
        ("tool_args_null", json.dumps({"tool_name": "response", "tool_args": None})),
        ("thoughts_string", call("response", {"text": "ok"}, thoughts="one thought")),
        ("thoughts_object", call("response", {"text": "ok"}, thoughts={"a": 1})),
        ("thoughts_nested_lists", call("response", {"text": "ok"}, thoughts=[[1, [2]], None, {"x": []}])),
        ("headline_list", call("response", {"text": "ok"}, headline=["a", "b"])),
        ("response_text_number", answer(12345)),
        ("response_text_list", answer(["a", "b"])),
        ("response_text_object", answer({"k": {"v": [1, 2]}})),
        ("response_text_null", answer(None)),
        ("response_text_bool", answer(False)),
        ("json_string_literal", '"just a string"'),
        ("json_number_literal", "12345"),
        ("json_null_literal", "null"),
        ("json_true_literal", "true"),
        ("object_without_tool_name", '{"thoughts": ["hm"], "headline": "x", "tool_args": {"text": "a"}}'),
        ("object_empty", "{}"),
        ("alias_tool_and_args", '{"tool": "response", "args": {"text": "via aliases"}}'),
        ("key_case_wrong", '{"Tool_Name": "response", "Tool_Args": {"text": "x"}}'),
        ("duplicate_keys", '{"tool_name": "nothing", "tool_name": "response", "tool_args": {"text": "dup"}}'),
        ("extra_top_level_keys", call("response", {"text": "x"}, extra={"deep": [1, 2, {"z": None}]}, n=1)),
    ]


def unknown_tools() -> list[tuple[str, str]]:
    return [
        ("unknown_tool_plain", call("teleport", {"to": "mars"})),
        ("unknown_tool_with_spaces", call("search the web", {"q": "x"})),
        ("unknown_tool_traversal", call("../../etc/passwd", {})),
        ("unknown_tool_absolute_path", call("/bin/sh", {"c": "id"})),
        ("unknown_tool_dotted", call("os.system", {"cmd": "id"})),
        ("unknown_tool_method", call("teleport:now", {})),
        ("unknown_method_on_response", call("response:bogus", {"text": "method ignored"})),
        ("unknown_runtime_code_execution", call("code_execution:cobol", {"code": "DISPLAY 'x'"})),
        ("unknown_tool_10k_name", call("t" * 10_000, {})),
        ("unknown_tool_unicode", call("werkzeug_\u00fc\u00df_\U0001f527", {})),
        ("unknown_tool_dunder", call("__init__", {})),
        ("unknown_tool_named_unknown", call("unknown", {})),
        ("unknown_tool_underscore_private", call("_private", {})),
        ("unknown_tool_nul_in_name", call("resp\x00onse", {"text": "x"})),
        ("unknown_tool_newline_in_name", call("response\nrm -rf", {"text": "x"})),
        ("skills_tool_bad_method", call("skills_tool:explode", {})),
        ("skills_tool_read_traversal", call("skills_tool:read_file", {"skill_name": "x", "file_path": "../../etc/passwd"})),
        ("skills_tool_load_missing", call("skills_tool:load", {"skill_name": "does-not-exist"})),
        ("skills_tool_args_wrong_type", call("skills_tool:search", {"query": ["a", {"b": 1}]})),
        ("call_subordinate_wrong_args", call("call_subordinate", {"message": None, "reset": "maybe", "profile": 5})),
    ]


def big() -> list[tuple[str, str]]:
    return [
        ("argument_1mb", answer("x" * (1 << 20))),
        ("argument_100kb_truncated", answer("y" * 100_000)[:-3]),
        ("thoughts_100k", call("response", {"text": "ok"}, thoughts=["t" * 100_000])),
        ("many_args_10k_keys", call("response", {"text": "ok", **{f"k{i}": i for i in range(10_000)}})),
    ]


def control_chars() -> list[tuple[str, str]]:
    return [
        ("nul_inside_value", answer("before\x00after")),
        ("nul_outside_json", "\x00\x00" + GOOD + "\x00"),
        ("nul_only", "\x00"),
        ("raw_control_chars_in_string", '{"tool_name": "response", "tool_args": {"text": "a\x01b\x02c\x1fd\te\nf"}}'),
        ("ansi_escape_sequences", answer("\x1b[31mred\x1b[0m \x1b]0;title\x07")),
        ("crlf_line_endings", GOOD.replace(", ", ",\r\n")),
        ("bom_prefix", "\ufeff" + GOOD),
        ("form_feed_vertical_tab", "\f\v" + GOOD + "\v\f"),
        ("escaped_nul", '{"tool_name": "response", "tool_args": {"text": "\\u0000 zero"}}'),
        ("del_and_c1_controls", answer("\x7f\x80\x85\x9f")),
        ("backspaces", "\b\b\b" + GOOD),
        ("control_chars_only", "".join(chr(c) for c in range(1, 32))),
    ]


def xml_calls() -> list[tuple[str, str]]:
    return [
        ("xml_tool_call_wrapping_json", "<tool_call>\n" + GOOD + "\n</tool_call>"),
        ("xml_tool_call_no_json", "<tool_call>response(text='hi')</tool_call>"),
        ("xml_invoke_name", '<invoke name="response">\n<parameter name="text">hi</parameter>\n</invoke>'),
        ("xml_function_calls_block", '<function_calls>\n<invoke name="code_execution">\n'
                                     '<parameter name="code">print(1)</parameter>\n</invoke>\n</function_calls>'),
        ("xml_function_equals", "<function=response>{\"text\": \"hi\"}</function>"),
        ("xml_tool_use", '<tool_use id="1"><name>response</name><input>{"text": "x"}</input></tool_use>'),
        ("xml_unclosed_invoke", '<invoke name="response"><parameter name="text">hi'),
        ("xml_then_valid_json", '<tool_call name="x"/>\n' + GOOD),
        ("xml_html_noise", "<html><body><p>" + GOOD + "</p></body></html>"),
        ("xml_cdata", "<![CDATA[" + GOOD + "]]>"),
    ]


def think() -> list[tuple[str, str]]:
    return [
        ("think_then_json", "<think>Let me consider the request.</think>\n" + GOOD),
        ("think_with_braces_then_json", '<think>maybe {"tool_name": "wrong"}?</think>' + GOOD),
        ("think_unclosed", "<think>I keep thinking and never stop"),
        ("think_unclosed_with_json_inside", "<think>plan: " + GOOD),
        ("think_close_without_open", "</think>" + GOOD),
        ("think_nested", "<think><think>inner</think>outer</think>" + GOOD),
        ("think_empty", "<think></think>" + GOOD),
        ("think_only_closed", "<think>only thoughts, no answer</think>"),
        ("reasoning_tag_then_json", "<reasoning>why</reasoning>" + GOOD),
        ("think_after_json", GOOD + "<think>afterthought</think>"),
        ("think_uppercase", "<THINK>shouting</THINK>" + GOOD),
        ("think_huge", "<think>" + "hmm " * 20_000 + "</think>" + GOOD),
    ]


def empties() -> list[tuple[str, str]]:
    return [
        ("empty_string", ""),
        ("single_space", " "),
        ("newlines_only", "\n\n\n"),
        ("tabs_only", "\t\t"),
        ("unicode_whitespace", "\u00a0\u2028\u2029\u3000"),
        ("zero_width_chars", "\u200b\u200c\u200d\u2060"),
    ]


def unicode() -> list[tuple[str, str]]:
    return [
        ("emoji_in_args", answer("\U0001f600\U0001f680\U0001f468\u200d\U0001f469\u200d\U0001f467")),
        ("emoji_everywhere", call("response", {"\U0001f511": "\U0001f5dd"}, thoughts=["\U0001f914"], headline="\U0001f4a1")),
        ("rtl_text", answer("\u05e9\u05dc\u05d5\u05dd \u202eevil\u202c \u0645\u0631\u062d\u0628\u0627")),
        ("combining_marks", answer("Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e" * 50)),
        ("cjk_text", answer("\u4f60\u597d\uff0c\u4e16\u754c\u3002\u3053\u3093\u306b\u3061\u306f")),
        ("escaped_surrogate_pair", '{"tool_name": "response", "tool_args": {"text": "\\ud83d\\ude00"}}'),
        ("escaped_lone_surrogate", '{"tool_name": "response", "tool_args": {"text": "\\ud800 lone"}}'),
        ("fullwidth_braces", "\uff5b\"tool_name\": \"response\", \"tool_args\": \uff5b\"text\": \"x\"\uff5d\uff5d"),
        ("smart_quotes", "{\u201ctool_name\u201d: \u201cresponse\u201d, \u201ctool_args\u201d: {\u201ctext\u201d: \u201cx\u201d}}"),
        ("replacement_chars", answer("\ufffd\ufffd\ufffd")),
        ("private_use_and_noncharacters", answer("\ue000\uffff\U0010ffff")),
    ]


def deep() -> list[tuple[str, str]]:
    n = 10_000
    return [
        ("nested_objects_10k", '{"a":' * n + "1" + "}" * n),
        ("open_braces_10k", "{" * n),
        ("open_brackets_10k", "[" * n),
        ("nested_in_args_10k", '{"tool_name": "response", "tool_args": {"text": "x", "deep": '
                               + "[" * n + "]" * n + "}}"),
        ("nested_300_in_args", '{"tool_name": "response", "tool_args": {"text": "x", "deep": '
                               + '{"a":' * 300 + "1" + "}" * 300 + "}}"),
        ("close_braces_10k", "}" * n),
        ("alternating_10k", "{[" * (n // 2)),
    ]


def quotes() -> list[tuple[str, str]]:
    return [
        ("unbalanced_missing_close_quote", '{"tool_name": "response, "tool_args": {"text": "x"}}'),
        ("unbalanced_extra_quote", '{"tool_name": ""response"", "tool_args": {"text": "x"}}'),
        ("unescaped_quote_inside", '{"tool_name": "response", "tool_args": {"text": "he said "hi" loudly"}}'),
        ("mixed_quotes", "{\"tool_name\": 'response', 'tool_args': {\"text\": 'x\"}}"),
        ("backtick_quotes", "{`tool_name`: `response`, `tool_args`: {`text`: `x`}}"),
        ("triple_quoted", '{"tool_name": """response""", "tool_args": {"text": """x"""}}'),
    ]


def fenced() -> list[tuple[str, str]]:
    return [
        ("fence_json", "```json\n" + GOOD + "\n```"),
        ("fence_plain", "```\n" + GOOD + "\n```"),
        ("fence_tilde", "~~~json\n" + GOOD + "\n~~~"),
        ("fence_unclosed", "```json\n" + GOOD),
        ("fence_two_blocks", "```json\n" + GOOD + "\n```\n```json\n" + answer("b") + "\n```"),
        ("fence_with_prose", "Here you go:\n```json\n" + GOOD + "\n```\nHope that helps."),
        ("fence_python_instead", "```python\nprint('hello')\n```"),
    ]


def lax_json() -> list[tuple[str, str]]:
    return [
        ("line_comments", '{\n// the tool\n"tool_name": "response", // ok\n"tool_args": {"text": "x"}\n}'),
        ("block_comments", '{/* c */"tool_name": /* d */ "response", "tool_args": {"text": "x"}}'),
        ("hash_comments", '{\n# hash\n"tool_name": "response",\n"tool_args": {"text": "x"}\n}'),
        ("trailing_commas", '{"tool_name": "response", "tool_args": {"text": "x",},}'),
        ("trailing_comma_array", '{"thoughts": ["a", "b",], "tool_name": "response", "tool_args": {"text": "x"}}'),
        ("single_quotes", "{'tool_name': 'response', 'tool_args': {'text': 'x'}}"),
        ("unquoted_keys", '{tool_name: "response", tool_args: {text: "x"}}'),
        ("python_literals", "{'tool_name': 'response', 'tool_args': {'text': 'x', 'a': True, 'b': None}}"),
        ("nan_infinity", '{"tool_name": "response", "tool_args": {"text": "x", "n": NaN, "i": -Infinity}}'),
        ("missing_commas", '{"tool_name": "response" "tool_args": {"text": "x"}}'),
        ("missing_colon", '{"tool_name" "response", "tool_args": {"text": "x"}}'),
        ("equals_instead_of_colon", '{"tool_name" = "response", "tool_args" = {"text" = "x"}}'),
    ]


def numbers() -> list[tuple[str, str]]:
    return [
        ("huge_exponent", '{"tool_name": "response", "tool_args": {"text": "x", "n": 1e400}}'),
        ("tiny_exponent", '{"tool_name": "response", "tool_args": {"text": "x", "n": 1e-400}}'),
        ("integer_5000_digits", '{"tool_name": "response", "tool_args": {"text": "x", "n": ' + "9" * 5000 + "}}"),
        ("integer_100k_digits_as_name", '{"tool_name": ' + "7" * 100_000 + "}"),
        ("negative_zero_and_hex", '{"tool_name": "response", "tool_args": {"text": "x", "z": -0, "h": 0x1F}}'),
        ("number_as_text", '{"tool_name": "response", "tool_args": {"text": 1e308}}'),
    ]


def doubled() -> list[tuple[str, str]]:
    return [
        ("doubled_braces", "{" + GOOD + "}"),
        ("doubled_braces_template_style", GOOD.replace("{", "{{").replace("}", "}}")),
        ("triple_braces", "{{" + GOOD + "}}"),
        ("template_placeholder_reply", "{{tool_name}}"),
        ("template_include_in_args", answer('{{include "agent.system.main.md"}} and {{if 1}}x{{endif}}')),
        ("template_unclosed_if_in_args", answer("{{if true}} never closed {{ {{")),
    ]


def tools_misbehaving() -> list[tuple[str, str]]:
    return [
        ("code_python_sleep_600", code("python", "import time\ntime.sleep(600)")),
        ("code_python_busy_loop", code("python", "while True:\n    pass")),
        ("code_terminal_sleep_600", code("terminal", "sleep 600")),
        ("code_python_raises", code("python", "raise ValueError('boom')")),
        ("code_python_system_exit", code("python", "raise SystemExit(3)")),
        ("code_python_sys_exit", code("python", "import sys\nsys.exit('bye')")),
        ("code_python_syntax_error", code("python", "def (:")),
        ("code_python_huge_output", code("python", "print('z' * 2_000_000)")),
        ("code_python_recursion", code("python", "def f(): return f()\nf()")),
        ("code_terminal_huge_output", code("terminal", "yes | head -c 1000000")),
        ("code_terminal_binary_output", code("terminal", "head -c 2000 /dev/urandom")),
        ("code_empty_code", code("python", "")),
        ("code_args_wrong_types", call("code_execution", {"runtime": 5, "code": ["print(1)"], "timeout": "soon"})),
        ("secret_placeholder_in_args", answer("\u00a7\u00a7secret(API_KEY) and \u00a7\u00a7secret(")),
    ]


def everything() -> list[tuple[str, str]]:
    groups = (truncated, prose, two_objects, arrays, wrong_types, unknown_tools, big, control_chars, xml_calls,
              think, empties, unicode, deep, quotes, fenced, lax_json, numbers, doubled, tools_misbehaving)
    cases = [case for group in groups for case in group()]
    names = [name for name, _ in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise SystemExit(f"duplicate case names: {sorted(duplicates)}")
    return cases


def main() -> int:
    cases = everything()
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*.txt"):
        old.unlink()
    for i, (name, text) in enumerate(cases, 1):
        with open(OUT / f"{i:03d}_{name}.txt", "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    print(f"wrote {len(cases)} replies to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
