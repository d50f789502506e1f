"""The loop in Agent Zero's order: extras, history → messages, misformat, repeats, tool lookup,
early stop, failure paths (reference §8.3 13–19, §8.2 5)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from a0nb import Agent
from a0nb.errors import ExtensionError, ModelError, TurnError
from a0nb.engine.loop import LoopData
from a0nb.providers.base import ModelConfig, ModelReply, new_partial
from a0nb.providers.stream import complete
from a0nb.testing import answer, tool_reply


def _agent(nb: Path, replies: list[Any], **kw: Any) -> Agent:
    return Agent(nb, model=replies, **kw)


def test_extras_glued_to_last_user_message(nb: Path) -> None:
    # reference 13
    agent = _agent(nb, [answer("x")])
    agent.history.messages().clear()
    agent.history = type(agent.history)()
    agent.history.add(False, "U", "user")
    ld = LoopData()
    ld.extras_persistent["a"] = "x"
    ld.extras_temporary["b"] = "y\nz"

    async def run() -> list[dict[str, Any]]:
        agent.extensions.registered.clear()
        ld.system = ["S"]
        from a0nb.engine import composition
        extras = composition.extras_text(ld)
        msg = agent.read_prompt("agent.context.extras.md", extras=json.dumps(extras, ensure_ascii=False))
        ld.history_output = agent.history.output()
        messages, _ = composition.build(ld, msg, extras, agent.shared.counter)
        ld.extras_temporary.clear()
        return messages

    messages = asyncio.run(run())
    assert messages[-1]["content"] == 'U\n[EXTRAS]\n{"a": "x", "b": "y\\nz"}'
    assert ld.extras_temporary == {} and ld.extras_persistent == {"a": "x"}


def test_first_call_messages_shape(nb: Path) -> None:
    # reference 14: [system, assistant(greeting), user('{"user_message": "hi"}' + "\n" + extras)]
    agent = _agent(nb, [answer("hello")])
    turn = agent.ask("hi")
    messages = turn.calls[0].messages
    assert [m["role"] for m in messages] == ["system", "assistant", "user"]
    assert json.loads(messages[1]["content"])["tool_name"] == "response"
    user = messages[2]["content"]
    assert user.startswith('{"user_message": "hi"}\n[EXTRAS]\n{')
    extras = json.loads(user.split("[EXTRAS]\n", 1)[1])
    assert "current_datetime" in extras and "2026-01-31 09:30:00" in extras["current_datetime"]


def test_misformat_reply_warns_and_loop_goes_on(nb: Path) -> None:
    # reference 15
    agent = _agent(nb, ["hello", answer("fine")])
    turn = agent.ask("hi")
    assert turn.text == "fine" and len(turn.calls) == 2
    kinds = [(m.kind, m.ai) for m in agent.history.current.messages]
    assert kinds[:3] == [("user", False), ("ai", True), ("warning", False)]
    assert agent.history.current.messages[1].content == "hello"
    warning = agent.history.current.messages[2].content
    assert "system_warning" in warning


def test_circuit_breaker_after_three_misformats(nb: Path) -> None:
    agent = _agent(nb, ["nope", "still nope", "<tool_call>x</tool_call>", answer("never")])
    with pytest.raises(TurnError) as info:
        agent.ask("hi")
    assert "3 replies in a row" in str(info.value) and "<tool_call>" in str(info.value)
    assert len(agent.calls) == 3
    assert agent.history.validate() == []
    agent.configure(model=[answer("next works")])
    assert agent.ask("again").text == "next works"


def test_repeated_reply_is_not_run_twice(nb: Path) -> None:
    # reference 16
    call = tool_reply("code_execution", runtime="python", code="counter.append(1)")
    agent = _agent(nb, [call, call, answer("done")], namespace={"counter": []})
    turn = agent.ask("go")
    assert turn.text == "done"
    assert agent.namespace["counter"] == [1]
    warnings = [m for m in agent.history.current.messages if m.kind == "warning"]
    assert len(warnings) == 1


def test_empty_tool_args_is_valid(nb: Path) -> None:
    # reference 17, with a0nb's deliberate difference: {} is valid
    agent = _agent(nb, ['{"tool_name": "response", "tool_args": {}}'])
    assert agent.ask("hi").text == ""


def test_tool_method_split_and_unknown_tool(nb: Path) -> None:
    # reference 18
    agent = _agent(nb, [tool_reply("skills_tool:list"), tool_reply("nonexistent_tool", x=1), answer("ok")])
    turn = agent.ask("hi")
    assert turn.calls[0].tool_request["tool_name"] == "skills_tool:list"
    assert "skills available" in turn.calls[0].tool_result
    result = turn.calls[1].tool_result
    assert "nonexistent_tool" in result and "code_execution" in result and "skills_tool" in result


def test_trailing_prose_is_dropped(nb: Path) -> None:
    # reference 19
    obj = tool_reply("response", text="brace } inside")
    agent = _agent(nb, [obj + " and some trailing prose that is long enough"])
    turn = agent.ask("hi")
    assert turn.text == "brace } inside"
    assert turn.calls[0].response == obj
    assert agent.history.current.messages[-1].content == obj


class _TwoChunks:
    """A provider whose first chunk is a whole response object plus trailing text."""

    name = "two-chunks"
    has_reasoning_channel = True

    def __init__(self) -> None:
        self.consumed = 0

    def init(self, config: ModelConfig) -> dict[str, Any]:
        return {"partial": new_partial()}

    def initialize_request(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> Any:
        return messages, state

    async def stream(self, messages: Any, state: dict[str, Any]) -> AsyncIterator[str]:
        for chunk in ('{"tool_name":"response","tool_args":{"text":"hi"}} trailing', " more"):
            self.consumed += 1
            yield chunk

    def process_chunk(self, chunk: str, state: dict[str, Any]) -> tuple[str, str]:
        state["partial"]["chunks"] += 1
        state["partial"]["content"].append(chunk)
        return "", chunk

    def finalize(self, state: dict[str, Any]) -> ModelReply:
        return ModelReply("".join(state["partial"]["content"]), chunks=state["partial"]["chunks"])


def test_stream_early_stop_consumes_one_chunk() -> None:
    # upstream 8.2 item 5
    from a0nb.engine.extract import first_closed_object

    calls: list[str] = []

    class Sink:
        async def reasoning(self, delta: str, full: str) -> None:
            raise AssertionError("no reasoning expected")

        async def response(self, delta: str, full: str) -> str | None:
            calls.append(full)
            return first_closed_object(full)

    provider = _TwoChunks()
    reply = asyncio.run(complete(provider, [], ModelConfig("x"), Sink()))
    assert reply.content == '{"tool_name":"response","tool_args":{"text":"hi"}}'
    assert reply.reasoning == "" and reply.stopped_early
    assert provider.consumed == 1 and len(calls) == 1
    assert calls[0] == '{"tool_name":"response","tool_args":{"text":"hi"}} trailing'


def test_tool_exception_goes_back_to_model(nb: Path) -> None:
    agent = _agent(nb, [tool_reply("explode", x=1), answer("recovered")])

    def explode(x: int) -> str:
        """Always fails."""
        raise RuntimeError("kaboom")

    agent.register_tool(explode)
    turn = agent.ask("go")
    assert turn.text == "recovered"
    assert "kaboom" in turn.calls[0].tool_result and "RuntimeError" in turn.calls[0].tool_result


def test_failing_extension_ends_turn_naming_file(nb: Path) -> None:
    folder = nb / "extensions" / "message_loop_prompts_after"
    folder.mkdir(parents=True)
    (folder / "_80_bad.py").write_text("from a0nb import Extension\nclass Bad(Extension):\n"
                                       "    def execute(self, **kw):\n        raise ValueError('bad hook')\n")
    agent = _agent(nb, [answer("never"), answer("works")])
    with pytest.raises(ExtensionError) as info:
        agent.ask("hi")
    assert "_80_bad.py" in str(info.value)
    assert agent.history.validate() == []
    (folder / "_80_bad.py").unlink()
    assert agent.ask("again").text == "never"


def test_max_iterations(nb: Path) -> None:
    replies = [tool_reply("code_execution", runtime="python", code=f"{i}") for i in range(5)]
    agent = _agent(nb, replies, settings={"max_iterations": 3})
    with pytest.raises(TurnError) as info:
        agent.ask("loop forever")
    assert "3 loop passes" in str(info.value)
    assert len(agent.calls) == 3 and agent.history.validate() == []


def test_provider_error_retried_before_first_chunk(nb: Path) -> None:
    agent = _agent(nb, [{"error": "rate_limit"}, answer("after retry")], settings={"backoff": 0.0})
    assert agent.ask("hi").text == "after retry"


def test_provider_error_after_retries_is_clear(nb: Path) -> None:
    agent = _agent(nb, [{"error": "server"}] * 3 + [answer("next")], settings={"backoff": 0.0})
    with pytest.raises(ModelError) as info:
        agent.ask("hi")
    assert "server error" in str(info.value)
    assert agent.history.validate() == []
    assert agent.ask("again").text == "next"


def test_stream_broken_midway_keeps_partial(nb: Path) -> None:
    agent = _agent(nb, [{"content": answer("this reply will be cut in the middle"), "error": "break"}, answer("ok")])
    with pytest.raises(ModelError) as info:
        agent.ask("hi")
    assert "partial reply was kept" in str(info.value)
    assert agent.history.current.messages[-1].ai
    assert agent.history.validate() == []
    assert agent.ask("again").text == "ok"


def test_scripted_model_running_out_names_file(nb: Path) -> None:
    (nb / "r.yaml").write_text("- '" + answer("one") + "'\n")
    agent = Agent(nb, model="scripted:r.yaml")
    agent.ask("first")
    with pytest.raises(ModelError) as info:
        agent.ask("second")
    assert "r.yaml" in str(info.value) and "ran out" in str(info.value)


def test_ask_inside_running_event_loop(nb: Path) -> None:
    agent = _agent(nb, [answer("sync inside loop"), answer("async")])

    async def main() -> tuple[str, str]:
        first = agent.ask("a").text  # a running loop in this thread: the bridge thread serves it
        second = (await agent.ask_async("b")).text
        return first, second

    assert asyncio.run(main()) == ("sync inside loop", "async")


def test_reset_and_calls(nb: Path) -> None:
    agent = _agent(nb, [answer("1"), answer("2")])
    agent.ask("a")
    agent.ask("b")
    assert [c.index for c in agent.calls] == [1, 2] and [t.index for t in agent.turns] == [1, 2]
    agent.reset()
    assert agent.calls == [] and agent.turns == [] and len(agent.history.messages()) == 1  # the greeting
    assert agent.ask("c").text == "1"  # scripted models restart


def test_call_subordinate_nests_records(nb: Path) -> None:
    replies = [tool_reply("call_subordinate", message="compute 2+2"), answer("4 (from the subordinate)"),
               answer("the subordinate said 4")]
    agent = _agent(nb, replies)
    turn = agent.ask("delegate")
    assert turn.text == "the subordinate said 4"
    assert [c.index for c in agent.calls] == [1, 3]
    [child] = agent.calls[0].children
    assert child.agent == 1 and child.parent == 1 and child.turn == 1
    assert turn.calls[0].tool_result == "4 (from the subordinate)"


def test_code_execution_python_uses_namespace_and_terminal(nb: Path) -> None:
    ns = {"df": {"a": [1, 2, 3]}}
    agent = _agent(nb, [tool_reply("code_execution", runtime="python", code="print('rows', len(df['a']))\nsum(df['a'])"),
                        tool_reply("code_execution", runtime="terminal", code="echo hello-from-shell"),
                        answer("done")], namespace=ns)
    turn = agent.ask("look at df")
    assert turn.calls[0].tool_result == "rows 3\n6\n"
    assert "hello-from-shell" in turn.calls[1].tool_result


def test_code_execution_timeout_and_deny(nb: Path) -> None:
    agent = _agent(nb, [tool_reply("code_execution", runtime="terminal", code="sleep 5", timeout=0.3),
                        answer("done")])
    assert "ran longer than 0.3 s" in agent.ask("sleep").calls[0].tool_result
    agent = _agent(nb, [tool_reply("code_execution", runtime="python", code="1"), answer("ok")],
                   settings={"approval": "deny"})
    result = agent.ask("x").calls[0].tool_result
    assert "deny" in result


def test_secret_aliases_resolved_for_tools_and_masked(nb: Path) -> None:
    # reference 25
    (nb / ".a0proj").mkdir()
    (nb / ".a0proj" / "secrets.env").write_text("API_KEY=abcd1234\n")
    seen: list[str] = []

    def echo(value: str) -> str:
        """Echo a value."""
        seen.append(value)
        return f"token {value}"

    agent = _agent(nb, [tool_reply("echo", value="§§secret(api_key)"), tool_reply("echo", value="§§secret(NOPE)"),
                        answer("ok")])
    agent.register_tool(echo)
    turn = agent.ask("use the key")
    assert seen == ["abcd1234"]
    assert turn.calls[0].tool_result == "token §§secret(API_KEY)"
    warning = [m for m in agent.history.current.messages if m.kind == "warning"][-1]
    assert "NOPE" in json.dumps(warning.content) and "API_KEY" in json.dumps(warning.content)
    blob = json.dumps([c.to_dict() for c in agent.calls]) + json.dumps(agent.history.to_dict())
    assert "abcd1234" not in blob
