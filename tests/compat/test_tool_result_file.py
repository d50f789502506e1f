"""Agent Zero's own `_90_save_tool_call_file.py` (the corpus file, unmodified) with a long tool result: the result
is saved under `$A0NB_HOME/chats/<context>/messages/`, the model sees the file's path in the tool result, as
upstream's whole `data` is the message, and an answer that names it with `§§include(path)` shows its text.
An upstream tool's `Response.additional` (call_subordinate's `hint`, read from a0nb's fw.hint.call_sub.md) is part
of the message too."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from a0nb import Agent
from a0nb.compat.agent import Agent as UpstreamAgent
from a0nb.resources import user_home
from a0nb.testing import answer, tool_reply

sys.path.insert(0, str(Path(__file__).parent))
from corpus_judge import find_corpus  # noqa: E402

CORPUS = find_corpus()
pytestmark = pytest.mark.skipif(CORPUS is None, reason="the upstream corpus (shared/a0-upstream) is not here")

HINT_TOOL = """from helpers.tool import Tool, Response


class Hinted(Tool):
    async def execute(self, **kwargs):
        return Response(message="done", break_loop=False, additional={"hint": "use the file"})
"""


def _tool_results(agent: Agent) -> list[dict]:
    return [m.content for m in agent.history.messages() if m.kind == "tool_result"]


def test_a_long_result_is_saved_and_its_file_included_in_the_answer(nb: Path) -> None:
    assert CORPUS is not None
    folder = nb / "extensions" / "hist_add_tool_result"
    folder.mkdir(parents=True)
    shutil.copy(CORPUS / "extensions" / "python" / "hist_add_tool_result" / "_90_save_tool_call_file.py", folder)
    agent = Agent(nb, model="scripted:replies.yaml")
    agent.register_tool(lambda: "row " * 200, name="long")
    saved = user_home() / "chats" / UpstreamAgent.of(agent).context.id / "messages" / "1.txt"
    (nb / "replies.yaml").write_text(yaml.safe_dump([tool_reply("long"), answer(f"Full table:\n§§include({saved})")]))
    turn = agent.ask("show the table")
    [result] = _tool_results(agent)
    assert result["file"] == str(saved) and saved.read_text() == "row " * 200
    assert json.dumps(str(saved)) in turn.calls[-1].messages[-1]["content"]  # the model was told where it is
    assert turn.text == "Full table:\n" + "row " * 200
    assert f"§§include({saved})" in turn.calls[-1].response  # (the record keeps the alias)


def test_an_upstream_tool_s_additional_is_part_of_the_message(nb: Path) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "hinted.py").write_text(HINT_TOOL)
    agent = Agent(nb, model=[tool_reply("hinted"), answer("ok")])
    turn = agent.ask("go")
    assert _tool_results(agent) == [{"tool_name": "hinted", "tool_result": "done", "hint": "use the file"}]
    assert '"hint": "use the file"' in turn.calls[-1].messages[-1]["content"]


def test_upstream_call_subordinate_hints_at_include_for_a_long_answer(nb: Path) -> None:
    assert CORPUS is not None
    (nb / "tools").mkdir()
    shutil.copy(CORPUS / "tools" / "call_subordinate.py", nb / "tools" / "call_subordinate.py")
    long_answer = "finding " * 80
    agent = Agent(nb, model=[tool_reply("call_subordinate", message="dig", reset=True), answer(long_answer),
                             answer("summarised")])
    turn = agent.ask("delegate")
    [result] = _tool_results(agent)
    assert result["tool_result"] == long_answer.strip()  # (upstream strips a tool result)
    assert result["hint"] == agent.read_prompt("fw.hint.call_sub.md") and "§§include(" in result["hint"]
    assert turn.text == "summarised" and not [d for d in agent.diagnostics if d.severity == "error"]
