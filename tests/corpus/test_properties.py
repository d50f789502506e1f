"""Property tests of the engine's input boundaries: the reply parser, the prompt engine, compaction under a
hostile summariser, and the cassette fingerprint's independence from dict ordering."""
from __future__ import annotations

import asyncio
import importlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a0nb.engine.compaction import CompactionSettings, compact
from a0nb.errors import A0Error, Misformat, ModelError, PromptError
from a0nb.engine.extract import ToolRequest, first_closed_object, parse_tool_request, tool_request_from_native
from a0nb.engine.history import History
from a0nb.files.prompts import PromptDir, PromptEngine
from a0nb.engine.tokens import TokenCounter

FAST = settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------------------- reply parser

_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20))
_json = st.recursive(_json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                     max_leaves=20)
_request = st.fixed_dictionaries({}, optional={
    "thoughts": _json, "headline": _json, "tool_name": st.one_of(st.sampled_from(["response", "x:y", ""]), _json),
    "tool_args": _json, "tool": _json, "args": _json})
_noise = st.sampled_from(["", "{", "}", "[", "]", '"', "'", "```json\n", "```", "<think>", "</think>", "<tool_call>",
                          "\\", "\x00", "//", "/*", ",", ":", "{{", "}}", "\n", "NaN", "1e999", "\ufeff"])


@st.composite
def replies(draw: st.DrawFn) -> str:
    """A JSON request, cut anywhere, with noise spliced in at random places."""
    text = json.dumps(draw(_request), ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(_noise) + text[at:]
    return draw(st.text(max_size=10)) + text + draw(st.text(max_size=10))


@FAST
@given(text=st.one_of(st.text(), replies()))
def test_reply_parser_never_raises(text: str) -> None:
    result = parse_tool_request(text)
    assert isinstance(result, (ToolRequest, Misformat))
    if isinstance(result, ToolRequest):
        assert isinstance(result.tool_name, str) and result.tool_name.strip() == result.tool_name != ""
        assert isinstance(result.tool_args, dict)
    else:
        assert str(result)  # a misformat always tells the model what was wrong
    closed = first_closed_object(text)
    assert closed is None or (closed.startswith("{") and closed in text)


@FAST
@given(calls=st.one_of(_json, st.lists(st.dictionaries(st.sampled_from(["function", "name", "arguments", "id"]),
                                                        st.one_of(_json, st.text(max_size=30)), max_size=4),
                                       max_size=3)))
def test_native_tool_calls_never_raise(calls: Any) -> None:
    assert isinstance(tool_request_from_native(calls), (ToolRequest, Misformat))


# ---------------------------------------------------------------------------- prompt engine

_template_bits = st.sampled_from([
    "{{if ", "{{ if ", "{{endif}}", "{{endif", "}}", "{{", "{{include ", '"a.md"', '"b.md"', '"self.md"',
    '"../x.md"', "'/etc/passwd'", "{{include original}}", "{{name}}", "{{missing}}", "{{items}}", "name", "items",
    " and ", " or ", " not ", "len(items)", "9**9**9", "__import__('os')", "(", ")", "[", "]", "1", "0", "==",
    "'s'", "\n", "```json\n", "```", "\x00", "\udcff", "\ufffd", " ", "x",
])


@pytest.fixture(scope="module")
def prompt_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Files that include each other (a cycle, a self-include) and one that is fine."""
    folder = tmp_path_factory.mktemp("prompts")
    (folder / "a.md").write_text('A {{include "b.md"}}', encoding="utf-8")
    (folder / "b.md").write_text('B {{if name}}{{include "a.md"}}{{endif}}', encoding="utf-8")
    (folder / "self.md").write_text('S {{include "self.md"}}', encoding="utf-8")
    (folder / "ok.md").write_text("fine {{name}}", encoding="utf-8")
    return folder


@FAST
@given(text=st.one_of(st.text(max_size=200), st.lists(st.one_of(_template_bits, st.text(max_size=4)),
                                                      max_size=60).map("".join)),
       name=st.one_of(st.none(), st.text(max_size=5), st.integers()),
       deep=st.one_of(st.integers(0, 120), st.just(1500)))
def test_prompt_engine_terminates_and_raises_only_prompt_errors(prompt_folder: Path, text: str, name: Any,
                                                                deep: int) -> None:
    engine = PromptEngine([PromptDir(prompt_folder, "corpus")])
    source = "{{if 1}}" * deep + text + "{{endif}}" * deep
    try:
        rendered = engine.render_text(source, name=name, items=[1, 2])
    except PromptError as exc:
        assert str(exc)
        return
    assert isinstance(rendered.text, str)


# ---------------------------------------------------------------------------- compaction


class Summariser:
    """Misbehaves in one chosen way; `fail_after` raises a ModelError mid-compaction."""

    def __init__(self, kind: str, fail_after: int | None) -> None:
        self.kind, self.fail_after, self.calls = kind, fail_after, 0

    async def __call__(self, system: str, message: str) -> str:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise ModelError("utility model failed mid-compaction")
        return {"echo": message + message, "empty": "", "junk": "\x00{{if x}}\ufffd" * 500,
                "gist": "gist"}[self.kind]


_content = st.one_of(st.text(max_size=300), st.integers(0, 2000).map(lambda n: "word " * n),
                     st.dictionaries(st.sampled_from(["tool_name", "tool_result", "x"]),
                                     st.one_of(st.text(max_size=500), st.lists(st.text(max_size=50), max_size=5)),
                                     max_size=3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topics=st.lists(st.lists(st.tuples(st.booleans(), _content), min_size=1, max_size=6), max_size=6),
       budget=st.integers(0, 2000), kind=st.sampled_from(["echo", "empty", "junk", "gist"]),
       fail_after=st.one_of(st.none(), st.integers(0, 3)))
def test_compaction_ends_within_budget_or_fails_cleanly(topics: list[Any], budget: int, kind: str,
                                                         fail_after: int | None) -> None:
    counter = TokenCounter(lambda text: len(text) // 4)
    history = History(counter=counter)
    for topic in topics:
        for ai, content in topic:
            history.add(ai, content)
        history.new_topic()
    summarise = Summariser(kind, fail_after)
    try:
        asyncio.run(compact(history, CompactionSettings(ctx_length=budget, history_share=1.0), summarise, counter))
    except A0Error:
        assert fail_after is not None  # only the injected utility failure may stop it
    else:
        assert history.tokens(counter) <= budget
    assert history.validate() == []


# ---------------------------------------------------------------------------- cassette fingerprint


def _shuffled(value: Any, rng: random.Random) -> Any:
    """The same value with every dict's keys in another order (lists keep theirs: order is meaning there)."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


_message = st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant"]),
                                  "content": st.one_of(st.text(max_size=40), _json)},
                                 optional={"name": st.text(max_size=5), "extra": _json})
_cassette_request = st.fixed_dictionaries({
    "role": st.sampled_from(["chat", "utility"]), "model": st.text(max_size=10),
    "messages": st.lists(_message, max_size=4),
    "params": st.dictionaries(st.text(max_size=8), _json, max_size=5)}, optional={"tools": _json})


@FAST
@given(request=_cassette_request, seed=st.integers(0, 2**32 - 1))
def test_fingerprint_is_stable_under_dict_ordering(request: dict[str, Any], seed: int) -> None:
    try:
        cassette = importlib.import_module("a0nb.providers.cassette")
        fingerprint = cassette.fingerprint
    except (ImportError, AttributeError) as exc:
        pytest.skip(f"a0nb.providers.cassette.fingerprint is not available yet ({exc})")
    shuffled = _shuffled(request, random.Random(seed))
    assert fingerprint(shuffled) == fingerprint(request)
