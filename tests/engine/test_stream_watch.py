"""The streamed-reply watch looks only at new text, yet finds the same first tool request (at the same
delta, with the same text) and the same partial value as re-parsing the whole reply on every delta."""
from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from a0nb.engine.dirty_json import MAX_DEPTH, DirtyJson
from a0nb.engine.extract import ToolRequest, first_closed_object, parse_tool_request
from a0nb import Agent
from a0nb.engine.loop_data import LoopData
from a0nb.engine.stream_watch import STRICT_LIMIT, LoopSink, ReplyWatch
from a0nb.testing import answer, tool_reply


def _reference(prefixes: list[str]) -> list[str | None]:
    """What each delta answers when the whole reply so far is parsed again: the first closed object,
    decided once (at the first delta where it closed), and kept if it is a valid tool request."""
    out: list[str | None] = []
    decided: str | None = None
    closed = False
    for text in prefixes:
        if not closed:
            obj = first_closed_object(text)
            if obj is not None:
                closed = True
                decided = obj if isinstance(parse_tool_request(obj), ToolRequest) else None
        out.append(decided)
    return out


def _check(text: str, cuts: list[int]) -> None:
    bounds = sorted(set(c for c in cuts if 0 < c < len(text))) + [len(text)]
    prefixes = [text[:b] for b in bounds]
    expected = _reference(prefixes)
    for live in (False, True):
        watch = ReplyWatch(live=live)
        for prefix, want in zip(prefixes, expected):
            assert watch.feed(prefix) == want, (live, prefix)
            if want is not None:
                break  # the stream stops at the first request
            brace = prefix.find("{")
            partial = DirtyJson().feed(prefix[brace:]) if brace >= 0 else None
            assert watch.value == partial, (live, prefix)


PIECES = [tool_reply("noop", i=1), answer("done"), '{"tool_name": "x", "tool_args": {"a": "}"}}',
          "{'tool_name': 'x', 'tool_args': {},}", '{{"tool_name": "x"}}', '{"no_tool": 1}', "[1] ",
          "prose { ", '{"tool_name": "x", "tool_args": {"code": "' + "}" * 40 + '"}}', "}", " ", "\n",
          '"', "{", ",", '{"a": tr', "ue}", "/* c */", '{"tool_name": "y", "tool_args": {"v": 1.5e3}}']


@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=5), st.lists(st.integers(0, 400), max_size=12))
@settings(max_examples=400)
def test_watch_matches_reparsing_every_prefix(pieces: list[str], cuts: list[int]) -> None:
    _check("".join(pieces), cuts)


@given(st.text(alphabet='{}[]"\'`:,/*\\ \nabtru0123.+-eE_'), st.lists(st.integers(0, 60), max_size=8))
@settings(max_examples=400)
def test_watch_matches_reparsing_on_noise(text: str, cuts: list[int]) -> None:
    _check('{"tool_name": "t", ' + text, [c + 19 for c in cuts])


_QUIET = tempfile.mkdtemp(prefix="a0nb-sink-")  # (one notebook folder for every example: nothing is written)


@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=5), st.lists(st.integers(0, 400), max_size=12))
@settings(max_examples=200, deadline=None)
def test_the_loop_sink_feeds_the_watch_only_at_a_closing_brace_yet_stops_where_reparsing_does(
        pieces: list[str], cuts: list[int]) -> None:
    """The chat call's sink (no stream extensions: quiet, not live) feeds the watch only the deltas with a `}`."""
    text = "".join(pieces)
    bounds = sorted(set(c for c in cuts if 0 < c < len(text))) + [len(text)]
    prefixes = [text[:b] for b in bounds]
    sink = LoopSink(Agent(Path(_QUIET), model=["x"]).models, LoopData())
    assert sink.quiet >= 0 and not sink.watch.live

    async def stream() -> list[str | None]:
        got, before = [], ""
        for prefix in prefixes:
            got.append(await sink.response(prefix[len(before):], prefix))
            before = prefix
            if got[-1] is not None:
                break
        return got

    got = asyncio.run(stream())
    assert got == _reference(prefixes)[:len(got)]


def test_long_and_deep_objects_still_close_where_dirty_json_says() -> None:
    long_code = tool_reply("code_execution", code="x = {}\n" * (STRICT_LIMIT // 4))
    _check(long_code, list(range(0, len(long_code), 97)))
    deep = '{"tool_name": "x", "tool_args": {"a": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}}"
    _check(deep, list(range(0, len(deep), 50)))
    assert json.loads(deep)  # strict JSON, yet DirtyJson refuses it: no early stop
    assert ReplyWatch(live=False).feed(deep) is None


def test_value_is_read_lazily_when_not_live() -> None:
    watch = ReplyWatch(live=False)
    assert watch.feed('{"tool_name": "x", "tool_ar') is None
    assert watch.parser is not None and watch.parser.value is None  # nothing parsed yet
    assert watch.value == {"tool_name": "x"}


def test_the_c_scanner_sorts_each_prefix_as_raw_decode_does() -> None:
    """The watch calls the decoder's scanner itself: a reply cut short stays on the strict path, one that is not
    strict JSON leaves it, and a closed object ends where `raw_decode` ends it (a value cut at the end of the text
    is a StopIteration from the scanner, an "Expecting value" error from raw_decode)."""
    decoder = json.JSONDecoder(strict=False)
    texts = ['{"a": {"b": 1}, "c": true} tail', '{"a": [1, {"x": null}], "b": "}{"}', '{"a": {}, "b": tru}',
             "{'a': {}}", '{"a": {"b": {}}, "c": [1, 2], "d": 1.5e3}', '{"a": {}, "b" {}}', tool_reply("x", i=3),
             '{"a": {"b": {"c": 12}}, "d": "\\u00e9}{"} x', '{}', '{"a": 1,}', '{"a": "x\\\\"}', '{"a": [1e5, -2.5]}',
             '{"a": {"b": 1} , "c": {"d": [{}]} }', '{"a": {"b": 1}, "c": "\\}"}', '{"a": {"b": 1}}}', '{"a" : {} ,}']
    for text in texts:
        for cut in range(1, len(text) + 1):
            prefix = text[:cut]
            if "}" not in prefix:
                continue
            watch = ReplyWatch(live=False)
            got = watch.feed(prefix)
            try:
                _, end = decoder.raw_decode(prefix, 0)
                strict, closed_at = True, end
            except json.JSONDecodeError as exc:
                strict = exc.pos == len(prefix) or exc.msg.startswith("Unterminated string") or (
                    # the scanner wants one more character after a \u escape's four digits: the watch's scan (of
                    # the reply with one `}` more, in the string) has it, and sees a string cut short
                    exc.msg.startswith("Invalid \\uXXXX") and exc.pos == len(prefix) - 5)
                closed_at = None
            assert watch._strict == strict, prefix
            if strict:
                obj = prefix[:closed_at] if closed_at is not None else None
                assert watch.done == (closed_at is not None) and got == (
                    obj if obj is not None and isinstance(parse_tool_request(obj), ToolRequest) else None), prefix


def test_a_brace_that_closes_the_arguments_is_decided_without_a_failed_scan(monkeypatch) -> None:
    """The `}` of the arguments object leaves the reply one `}` short: the watch's scan (of the reply with one `}`
    more) ends past it and raises nothing; the next `}` closes the request."""
    from a0nb.engine import stream_watch

    raised = []

    def scan(text: str, at: int) -> object:
        try:
            return json.JSONDecoder(strict=False).scan_once(text, at)  # type: ignore[attr-defined]
        except Exception as exc:
            raised.append(exc)
            raise

    monkeypatch.setattr(stream_watch, "_SCAN", scan)
    reply = tool_reply("noop", i=3)
    watch = ReplyWatch(live=False)
    assert watch.feed(reply[:-1]) is None and not watch.done and watch._strict
    assert watch.feed(reply) == reply and watch.parsed is not None and watch.parsed.tool_args == {"i": 3}
    deeper = '{"tool_name": "x", "tool_args": {"a": {"b": 1}'  # two `}` short: the scan stops past the added one
    watch = ReplyWatch(live=False)
    assert watch.feed(deeper) is None and watch._strict
    assert watch.feed(deeper + "}}") == deeper + "}}"
    assert not raised[1:]  # (the one raise: the two-short reply's scan, stopped past the added `}`)
