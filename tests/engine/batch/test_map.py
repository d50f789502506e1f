"""Agent.map on threads and on any concurrent.futures.Executor: input order whatever the completion order,
per-item failures, retries, interrupts that keep finished items, and cassettes recorded and replayed per item."""
from __future__ import annotations

import concurrent.futures as cf
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from a0nb import Agent
from a0nb.engine.batch import MapResult, Progress
from a0nb.testing import answer, tool_reply

CITIES = {"Oslo": "Norway", "Lima": "Peru", "Rome": "Italy", "Cairo": "Egypt", "Quito": "Ecuador"}
NAP = '''import asyncio

async def nap(seconds: float) -> str:
    """Wait a while.

    seconds: how long
    """
    await asyncio.sleep(float(seconds))
    return "rested"
'''


def by_city(naps: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """One scripted answer per city, found by `when`; a city in `naps` first calls the nap tool."""
    replies: list[dict[str, Any]] = []
    for city, country in CITIES.items():
        if naps and city in naps:
            replies.append({"when": f"is {city} in", "content": tool_reply("nap", seconds=naps[city])})
        replies.append({"when": f"is {city} in", "content": answer(country)})
    return replies


def test_results_come_in_input_order_with_texts_calls_and_cost(nb: Path) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "nap.py").write_text(NAP)
    agent = Agent(nb, model=by_city({"Oslo": 0.4, "Lima": 0.2}))  # the first items finish last
    seen: list[Progress] = []
    result = agent.map(list(CITIES), "Which country is {item} in?", concurrency=5,
                       on_progress=lambda p: seen.append(Progress(p.total, p.done, p.failed, p.running, p.cost)))
    assert isinstance(result, MapResult) and result.executor == "threads" and not result.interrupted
    assert result.texts == list(CITIES.values())
    assert [t.index for t in result] == [1, 2, 3, 4, 5]
    assert [len(t.calls) for t in result] == [2, 2, 1, 1, 1]
    assert result.items == list(CITIES) and result.prompts[0] == "Which country is Oslo in?"
    assert result.failed == [] and result.cost == 0.0 and all(t.cost == 0.0 for t in result)
    assert max(p.running for p in seen) == 5 and (seen[-1].done, seen[-1].running) == (5, 0)
    # each item ran in a fresh agent: only its own prompt is in its history
    first = result[0].calls[0].messages
    assert "Oslo" in str(first) and "Lima" not in str(first[1:])
    assert agent.calls == [] and agent.turns == []  # the mapping agent itself is untouched


def test_items_get_the_agents_configuration_and_not_its_history(nb: Path) -> None:
    (nb / "agents" / "terse" / "prompts").mkdir(parents=True)
    (nb / "agents" / "terse" / "agent.yaml").write_text("title: terse\n")
    (nb / "agents" / "terse" / "prompts" / "agent.system.main.specifics.md").write_text("Answer in one word.")
    agent = Agent(nb, model=[answer("hello")] + by_city(), profile="terse", settings={"max_iterations": 7})
    agent.shared.magic_settings["ctx_length"] = 99_000  # the %config layer travels too
    agent.ask("hi")
    result = agent.map(["Oslo"], "Which country is {item} in?")
    assert result.errors == [None], result.errors
    system = result[0].calls[0].messages[0]["content"]
    assert "Answer in one word." in system
    assert "hi" not in [m.get("content") for m in result[0].calls[0].messages[1:]]


def test_a_failing_item_fails_alone(nb: Path) -> None:
    replies = by_city() + [{"when": "is Atlantis in", "error": "auth"}]
    agent = Agent(nb, model=replies)
    result = agent.map(["Oslo", "Atlantis", "Rome"], "Which country is {item} in?", concurrency=2)
    assert result.texts[0::2] == ["Norway", "Italy"] and result.failed == [1]
    assert "authentication failed" in str(result[1].error)
    assert repr(result) == "MapResult(3 items, 2 ok, 1 failed, executor='threads')"


def test_rate_limited_calls_are_retried_with_backoff(nb: Path) -> None:
    replies = [{"when": "is Oslo in", "error": "rate_limit"}, {"when": "is Oslo in", "error": "rate_limit"}] + by_city()
    agent = Agent(nb, model=replies, settings={"backoff": 0.01, "retries": 2})
    result = agent.map(["Oslo", "Lima"], "Which country is {item} in?")
    assert result.texts == ["Norway", "Peru"] and result.failed == []


def test_code_the_items_run_takes_turns_in_copies_of_the_namespace(nb: Path) -> None:
    code = "import time\nstart = time.monotonic(); time.sleep(0.15); spans.append((start, time.monotonic())); mine = {c!r}"
    replies: list[dict[str, Any]] = []
    for city in ("Oslo", "Lima", "Rome"):
        replies += [{"when": f"is {city} in", "content": tool_reply("code_execution", runtime="python", code=code.format(c=city))},
                    {"when": f"is {city} in", "content": answer(city)}]
    spans: list[tuple[float, float]] = []
    agent = Agent(nb, model=replies, namespace={"spans": spans}, settings={"approval": "auto"})
    result = agent.map(["Oslo", "Lima", "Rome"], "Which country is {item} in?", concurrency=3)
    assert result.texts == ["Oslo", "Lima", "Rome"]
    spans.sort()
    assert len(spans) == 3 and all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # never two at once
    assert "mine" not in agent.namespace  # each item wrote into its own copy


def test_an_interrupt_keeps_finished_items_and_cancels_the_rest(nb: Path) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "nap.py").write_text(NAP)
    agent = Agent(nb, model=by_city({"Lima": 30, "Rome": 30, "Cairo": 30, "Quito": 30}))
    fired = threading.Event()

    def ctrl_c_after_the_first(progress: Progress) -> None:
        if progress.done == 1 and progress.running == 2 and not fired.is_set():
            fired.set()
            raise KeyboardInterrupt  # where a kernel interrupt lands: in the thread that waits for the items

    result = agent.map(list(CITIES), "Which country is {item} in?", concurrency=3, on_progress=ctrl_c_after_the_first)
    assert result.interrupted and fired.is_set()
    assert result.texts[0] == "Norway" and result[0].error is None
    assert all(t.interrupted for t in result[1:]), [t.error for t in result]
    assert result.failed == [1, 2, 3, 4]
    assert "cancelled: the batch was interrupted before this item started" in str(result[4].error)
    assert result.elapsed < 20


def _plain_item(agent_dir: str, item: str) -> str:
    return item


def test_any_executor_is_accepted(nb: Path) -> None:
    agent = Agent(nb, model=by_city())
    with cf.ThreadPoolExecutor(2) as pool:
        result = agent.map(["Oslo", "Rome"], "Which country is {item} in?", executor=pool)
    assert result.executor == "ThreadPoolExecutor" and result.texts == ["Norway", "Italy"]
    assert result[0].calls[0].response and result[0].calls[0].messages  # records came back as records


def test_a_process_pool_runs_items_in_other_processes(nb: Path) -> None:
    agent = Agent(nb, model=by_city())
    with cf.ProcessPoolExecutor(2) as pool:
        result = agent.map(["Oslo", "Lima", "Quito"], "Which country is {item} in?", executor=pool)
    assert result.texts == ["Norway", "Peru", "Ecuador"] and result.executor == "ProcessPoolExecutor"


def test_a_map_recorded_to_a_cassette_replays_offline_in_any_order(nb: Path) -> None:
    (nb / "replies.yaml").write_text(yaml.safe_dump(by_city()))
    agent = Agent(nb, model="record:batch.cassette.yaml:scripted:replies.yaml")
    recorded = agent.map(list(CITIES), "Which country is {item} in?", concurrency=3)
    assert recorded.failed == [] and len(yaml.safe_load((nb / "batch.cassette.yaml").read_text())) == 5
    (nb / "replies.yaml").unlink()  # the replay must not need the model
    replayer = Agent(nb, model="replay:batch.cassette.yaml")
    for order in (list(CITIES), list(reversed(CITIES)), ["Rome", "Oslo"]):
        replayed = replayer.map(order, "Which country is {item} in?", concurrency=2)
        assert replayed.texts == [CITIES[c] for c in order], replayed.errors
    missing = replayer.map(["Oslo", "Paris"], "Which country is {item} in?")
    assert missing.failed == [1] and "no recorded call in batch.cassette.yaml matches" in str(missing[1].error)


def test_to_pandas_has_one_row_per_item(nb: Path) -> None:
    pytest.importorskip("pandas")
    result = Agent(nb, model=by_city()).map(["Oslo", "Lima"], "Which country is {item} in?")
    frame = result.to_pandas()
    assert list(frame["text"]) == ["Norway", "Peru"] and list(frame["item"]) == ["Oslo", "Lima"]
    assert list(frame.columns) == ["item", "prompt", "text", "error", "calls", "cost", "interrupted"]
