"""Batch inputs: every bad input is refused before anything runs, with a message that says what to do."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from a0nb import Agent
from a0nb.engine.batch.items import as_items, prompts
from a0nb.errors import ConfigError
from a0nb.testing import answer


@pytest.mark.parametrize("items, needle", [
    ([], "items is empty"),
    ((x for x in ()), "items is empty"),
    ("Oslo Lima", "single string"),
    ({"a": 1}, "items is a dict"),
    (42, "must be a list"),
])
def test_bad_items_are_refused(items: Any, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        as_items(items)


@pytest.mark.parametrize("template, needle", [
    ("Summarise this", r"no \{item\} placeholder"),
    ("Summarise {text}", r"uses \{text\}; only \{item\}"),
    ('Return {"city": {item}}', r"uses \{\"city\"\}"),
    ("Summarise {item", "not a valid format string"),
    (42, "must be a string with"),
])
def test_bad_templates_are_refused(template: Any, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        prompts(["a"], template)


def test_unhashable_items_and_item_fields_work() -> None:
    rows = [{"city": "Oslo", "tags": ["a"]}, {"city": "Lima", "tags": []}]  # dicts with lists: unhashable
    assert prompts(rows, "Where is {item[city]}? ({item})") == [
        "Where is Oslo? ({'city': 'Oslo', 'tags': ['a']})", "Where is Lima? ({'city': 'Lima', 'tags': []})"]
    assert prompts(rows, lambda row: f"City: {row['city']}") == ["City: Oslo", "City: Lima"]
    assert prompts(["x"], "Braces {{kept}} around {item}") == ["Braces {kept} around x"]


def test_an_item_that_does_not_fit_the_template_is_named() -> None:
    with pytest.raises(ConfigError, match=r"item 1 \(\{'town': 'Lima'\}\) does not fit the template: KeyError"):
        prompts([{"city": "Oslo"}, {"town": "Lima"}], "Where is {item[city]}?")


def test_huge_items_are_refused_with_the_limit_and_the_way_out() -> None:
    with pytest.raises(ConfigError, match=r"item 1 makes a prompt of 300,005 characters \(limit 200,000\).*max_prompt_chars="):
        prompts(["short", "x" * 300_000], "Read {item}")
    assert len(prompts(["x" * 300_000], "{item}", max_prompt_chars=400_000)[0]) == 300_000


def test_a_template_function_must_return_text() -> None:
    with pytest.raises(ConfigError, match="returned int for item 0"):
        prompts(["a"], lambda item: 3)
    with pytest.raises(ConfigError, match="item 0 .* gives an empty prompt"):
        prompts([""], "{item}")


def test_pandas_tables_map_by_row() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"city": ["Oslo", "Lima"], "units": [41, 12]})
    assert as_items(frame) == [{"city": "Oslo", "units": 41}, {"city": "Lima", "units": 12}]
    assert as_items(frame["city"]) == ["Oslo", "Lima"]


def test_bad_options_are_refused_before_any_item_runs(nb: Path) -> None:
    agent = Agent(nb, model=[answer("never used")])
    for options, needle in [({"concurrency": 0}, "concurrency must be"), ({"concurrency": 2.5}, "concurrency must be"),
                            ({"executor": "dask"}, "executor must be"),
                            ({"address": "127.0.0.1:6379"}, "address= is for executor='ray'")]:
        with pytest.raises(ConfigError, match=needle):
            agent.map(["a"], "{item}", **options)
    assert agent.calls == []
