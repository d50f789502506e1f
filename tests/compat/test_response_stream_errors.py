"""Agent Zero ignores any error at `response_stream` (its `handle_response_stream` catches them): the partial
value of a streaming reply may lack what a later delta brings. Upstream's own `_10_log_from_stream.py` (the corpus
file, unmodified) fails when a delta ends right after `"code":` of a `code_execution_tool` call, because the
partial value's `code` is None there. In a0nb the reply goes on, the tool runs, and the failure is a diagnostic
naming the file and line; an error at any other point still ends the step."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.errors import ExtensionError
from a0nb.providers.scripted import CHUNK
from a0nb.testing import answer

sys.path.insert(0, str(Path(__file__).parent))
from corpus_judge import find_corpus  # noqa: E402

CORPUS = find_corpus()
pytestmark = pytest.mark.skipif(CORPUS is None, reason="the upstream corpus (shared/a0-upstream) is not here")
LOG = "extensions/python/response_stream/_10_log_from_stream.py"


def _code_call(code: str) -> str:
    """A code_execution_tool request whose streamed deltas (the scripted model's CHUNK characters each) include one
    that ends right after `"code": `, before the code's first character arrives."""
    head = '{"thoughts": ["run it"], "headline": "Computing", "tool_name": "code_execution_tool", ' \
           '"tool_args": {"runtime": "python", "code": '
    pad = -len(head) % CHUNK
    head = head.replace('"run it"', '"run it' + "." * pad + '"')
    assert len(head) % CHUNK == 0
    return head + json.dumps(code) + "}}"


def _place(nb: Path, path: str, point: str) -> Path:
    target = nb / "extensions" / point / Path(path).name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(CORPUS / path, target)  # type: ignore[operator]
    return target


def test_upstream_log_from_stream_failing_on_a_partial_reply_does_not_stop_it(nb: Path) -> None:
    placed = _place(nb, LOG, "response_stream")
    agent = Agent(nb, model=[_code_call("6 * 7"), answer("42"), answer("again")])
    agent.register_tool(lambda runtime, code: str(eval(code)), name="code_execution_tool")
    turn = agent.ask("compute")
    assert turn.ok and turn.text == "42"
    assert turn.calls[0].tool_request["tool_name"] == "code_execution_tool"  # type: ignore[index]
    assert "42" in str(turn.calls[0].tool_result)
    # a delta ending after `"tool_args": ` (line 56: `in` on None) and one after `"code": ` (line 59: len(None))
    diags = [d for d in agent.diagnostics if d.area == "extension"]
    assert {(d.severity, d.path) for d in diags} == {("warning", str(placed))}
    lines = placed.read_text().splitlines()
    assert any(d.line and "len(parsed['tool_args']['code'])" in lines[d.line - 1] for d in diags)
    assert all("TypeError" in d.message and "response_stream" in d.message for d in diags)
    assert agent.ask("again").ok  # (nothing left half done)


def test_the_rest_of_the_chain_runs_at_the_next_delta(nb: Path) -> None:
    _place(nb, LOG, "response_stream")
    seen = []
    agent = Agent(nb, model=[_code_call("print(1)"), answer("done")])
    agent.register_extension("response_stream", lambda parsed: seen.append(dict(parsed)), name="_20_after")
    agent.ask("go")
    seen = [p for p in seen if p.get("tool_name") == "code_execution_tool"]
    assert seen and seen[-1]["tool_args"]["code"] == "print(1)"  # (the last delta's whole value)
    # the deltas whose `code` had not arrived made the upstream file fail, and skipped the rest of the chain
    assert all(p.get("tool_args", {}).get("code") is not None for p in seen if "code" in p.get("tool_args", {}))


def test_an_error_at_another_stream_point_still_ends_the_step(nb: Path) -> None:
    agent = Agent(nb, model=[_code_call("print(1)"), answer("done")])

    def broken(stream_data: dict) -> None:
        if not failed:
            failed.append(stream_data["chunk"])
            raise ValueError("chunk filter broke")

    failed: list[str] = []
    agent.register_extension("response_stream_chunk", broken, name="_10_broken")
    with pytest.raises(ExtensionError, match="chunk filter broke"):
        agent.ask("go")
    assert agent.ask("again").text == "done"  # (the next ask works: history stayed consistent)
