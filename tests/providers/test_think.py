"""Tests for splitting <think>/<reasoning> off a reply: whole text, every chunk boundary, random chunkings."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a0nb.providers.think import ThinkSplitter, split_think

ANSWER = '{"tool_name": "response", "tool_args": {"text": "hi"}}'


def run_chunks(chunks: list[str]) -> tuple[str, str]:
    splitter = ThinkSplitter()
    reasoning, response = "", ""
    for chunk in [*chunks, None]:
        r, a = splitter.flush() if chunk is None else splitter.feed(chunk)
        reasoning, response = reasoning + r, response + a
    return reasoning, response


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"<think>plan it</think>{ANSWER}", ("plan it", ANSWER)),
        (f"  \n<think>\nplan\n</think>\n\n{ANSWER}", ("\nplan\n", ANSWER)),
        (f"<reasoning>why</reasoning>{ANSWER}", ("why", ANSWER)),
        (f"<THINK>loud</Think>{ANSWER}", ("loud", ANSWER)),
        (ANSWER, ("", ANSWER)),
        (f"  {ANSWER}", ("", f"  {ANSWER}")),
        ("<think>never closed", ("never closed", "")),
        ("<think></think>", ("", "")),
        (f"<think>a</reasoning>b</think>{ANSWER}", ("a</reasoning>b", ANSWER)),
        (f"<think>x <think> y</think>{ANSWER}", ("x <think> y", ANSWER)),
        ("<thinking>not a tag</thinking>", ("", "<thinking>not a tag</thinking>")),
        ("<thi", ("", "<thi")),
        ("", ("", "")),
        ("   ", ("", "   ")),
    ],
)
def test_split_think(text: str, expected: tuple[str, str]) -> None:
    assert split_think(text) == expected


def test_tag_only_at_start() -> None:
    text = f"Answer first <think>not reasoning</think> {ANSWER}"
    assert split_think(text) == ("", text)


def test_after_close_everything_is_response() -> None:
    assert split_think("<think>r</think>a <think>b</think>") == ("r", "a <think>b</think>")


@pytest.mark.parametrize(
    "text",
    [
        f"<think>plan it</think>{ANSWER}",
        f" \n<reasoning>step 1\nstep 2</reasoning>\n{ANSWER}",
        "<think>unclosed </thin",
        f"<Think>case</THINK>   {ANSWER}",
        f"<thx>{ANSWER}",
        "  <think",
    ],
)
def test_every_single_chunk_boundary(text: str) -> None:
    whole = split_think(text)
    for cut in range(len(text) + 1):
        assert run_chunks([text[:cut], text[cut:]]) == whole, cut
    for first in range(len(text) + 1):
        for second in range(first, min(len(text), first + 12) + 1):
            assert run_chunks([text[:first], text[first:second], text[second:]]) == whole


def test_character_by_character() -> None:
    text = f"<think>one</think>{ANSWER}"
    assert run_chunks(list(text)) == ("one", ANSWER)


def test_streaming_deltas_are_timely() -> None:
    splitter = ThinkSplitter()
    assert splitter.feed("<thi") == ("", "")
    assert splitter.feed("nk>step one ") == ("step one ", "")
    assert splitter.feed("and </th") == ("and ", "")
    assert splitter.feed("ink>\n{") == ("", "{")
    assert splitter.feed('"a": 1}') == ("", '"a": 1}')
    assert splitter.flush() == ("", "")


def test_flush_releases_held_partial_close_as_reasoning() -> None:
    splitter = ThinkSplitter()
    assert splitter.feed("<think>abc</thi") == ("abc", "")
    assert splitter.flush() == ("</thi", "")


TOKENS = [*"<>/thinkREASOg {}\n ", "<think>", "</think>", "<reasoning>", "</reasoning>", "</th", "<thi"]
tag_soup = st.lists(st.sampled_from(TOKENS), max_size=12).map("".join)


@given(st.lists(tag_soup, max_size=8))
@settings(max_examples=500)
def test_random_chunkings_match_split_think(chunks: list[str]) -> None:
    assert run_chunks(chunks) == split_think("".join(chunks))


@given(st.text(), st.text(), st.data())
@settings(max_examples=200)
def test_random_chunking_of_think_replies(reasoning: str, answer: str, data: st.DataObject) -> None:
    text = f"<think>{reasoning}</think>{answer}"
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=10)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    result = run_chunks(chunks)
    assert result == split_think(text)
    lowered = reasoning.translate(str.maketrans("THINK", "think"))
    if "</think>" not in lowered:
        assert result == (reasoning, answer.lstrip())
