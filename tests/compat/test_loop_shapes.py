"""Object compatibility, the loop's data (issue 17, item 2): `loop_data.history_output` in Agent Zero's
`{"ai", "content"}` shape, and `call_utility_model`'s streamed callback and `background` flag, both seen
through upstream-style extension files in a notebook folder."""
from __future__ import annotations

from pathlib import Path

from a0nb import Agent
from a0nb.testing import answer

HISTORY_READER = '''
from helpers.extension import Extension
from agent import LoopData


class ReadHistory(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        seen = [(m["ai"], str(m["content"])[:40], m.get("ai")) for m in loop_data.history_output]
        self.agent.set_data("seen", seen)
        self.agent.set_data("as_dicts", [dict(m) == {"ai": m["ai"], "content": m["content"]}
                                         for m in loop_data.history_output])
        loop_data.history_output.append({"ai": False, "content": "a note from an upstream extension"})
        loop_data.history_output.insert(0, {"ai": True, "content": {"thoughts": ["first"]}})
'''


def _put(nb: Path, rel: str, text: str) -> None:
    path = nb / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_upstream_extension_reads_and_extends_history_output_as_dicts(nb: Path) -> None:
    _put(nb, "extensions/message_loop_prompts_after/_40_read_history.py", HISTORY_READER)
    agent = Agent(nb, model=[answer("done")])
    turn = agent.ask("hello there")
    assert turn.text == "done"
    seen = agent.data["seen"]
    assert seen and all(isinstance(ai, bool) and ai is again for ai, _, again in seen)
    assert any("hello there" in content and not ai for ai, content, _ in seen)
    assert all(agent.data["as_dicts"])
    sent = turn.calls[0].messages
    assert "a note from an upstream extension" in sent[-1]["content"]
    assert sent[1]["role"] == "assistant" and sent[1]["content"].startswith('{"thoughts": ["first"]}\n')


UTILITY_CALLER = '''
from helpers.extension import Extension


class Summarise(Extension):
    async def execute(self, **kwargs):
        chunks = []

        async def on_chunk(piece: str):
            chunks.append(piece)

        answer = await self.agent.call_utility_model(system="Summarise.", message="the chat", callback=on_chunk,
                                                     background=True)
        self.agent.set_data("utility", {"answer": answer, "chunks": chunks})
'''

UTILITY_WATCH = '''
from helpers.extension import Extension


class Watch(Extension):
    async def execute(self, call_data: dict = {}, **kwargs):
        self.agent.set_data("call_data", {"background": call_data["background"],
                                          "callback": call_data["callback"] is not None})
'''


def test_upstream_utility_call_streams_chunks_to_its_callback(nb: Path) -> None:
    _put(nb, "extensions/monologue_end/_50_summarise.py", UTILITY_CALLER)
    _put(nb, "extensions/util_model_call_before/_10_watch.py", UTILITY_WATCH)
    reply = "a short summary that arrives in several streamed pieces"
    (nb / "util.yaml").write_text(f"- '{reply}'\n", encoding="utf-8")
    agent = Agent(nb, model=[answer("done")], utility_model="scripted:util.yaml")
    assert agent.ask("go").text == "done"
    got = agent.data["utility"]
    assert got["answer"] == reply
    assert len(got["chunks"]) > 1 and "".join(got["chunks"]) == reply
    assert agent.data["call_data"] == {"background": True, "callback": True}
