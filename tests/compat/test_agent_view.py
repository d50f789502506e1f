"""Object compatibility: what upstream extensions and tools see as `self.agent` (issue 17, item 2), and the
`_functions/agent/Agent/...` points named as upstream (item 3)."""
from __future__ import annotations

from pathlib import Path

from a0nb import Agent
from a0nb.testing import answer, tool_reply

WATCHER = '''
from helpers.extension import Extension
from agent import Agent, LoopData


class Watcher(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        assert isinstance(self.agent, Agent)
        self.agent.set_data("seen", (self.agent.get_data("seen") or 0) + 1)
        self.agent.set_data("who", f"{self.agent.agent_name}/{self.agent.number}/{self.agent.config.profile or 'Default'}")
        if loop_data.iteration == 0:
            self.agent.context.log.log(type="warning", heading="watch", content="careful with the probe")
'''

RECOVER = '''
from helpers.extension import Extension
from helpers.errors import RepairableException, HandledException


class Recover(Extension):
    async def execute(self, data: dict = {}, **kwargs):
        exc = data.get("exception")
        if exc is None or isinstance(exc, (RepairableException, HandledException)):
            return
        self.agent.set_data("recovered", type(exc).__name__)
        self.agent.hist_add_warning(message=f"retrying after {type(exc).__name__}", id="x")
        data["exception"] = None
'''

TOOL = '''
from helpers.tool import Tool, Response


class Echo(Tool):
    async def execute(self, text="", **kwargs):
        return Response(message=f"echo {text} via {self.name}", break_loop=False)
'''

TOOL_NAMES = '''
from helpers.extension import Extension


class Names(Extension):
    async def execute(self, tool_name: str = "", **kwargs):
        self.agent.set_data("tool_names", (self.agent.get_data("tool_names") or []) + [tool_name])
'''


def _put(nb: Path, rel: str, text: str) -> None:
    path = nb / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_upstream_extension_sees_agent_zero_attributes_and_logs_into_the_record(nb: Path) -> None:
    _put(nb, "extensions/message_loop_start/_50_watch.py", WATCHER)
    _put(nb, "tools/echo.py", TOOL)
    _put(nb, "extensions/python/tool_execute_before/_20_names.py", TOOL_NAMES)
    agent = Agent(nb, model=[tool_reply("echo:loud", text="hi"), answer("done")])
    assert agent.ask("go").text == "done"
    assert agent.data["seen"] == 2 and agent.data["who"] == "A0/0/Default"
    assert agent.data["tool_names"] == ["echo", "response"]  # bare names (not "echo:loud"), as upstream
    assert any("log warning: watch careful with the probe" in d for d in agent.calls[0].diagnostics)
    from a0nb.inspector import render_call  # the live view's call card and %a0 inspect show the record
    assert "log warning: watch careful with the probe" in render_call(agent.calls[0], agent=agent).html
    result = [m.content for m in agent.history.messages() if m.kind == "tool_result"][0]
    assert result == {"tool_name": "echo", "tool_result": "echo hi via echo"}
    assert "echo hi via echo" in str(agent.calls[1].messages)


def test_handle_exception_end_point_named_as_upstream_can_clear_an_error(nb: Path) -> None:
    _put(nb, "extensions/_functions/agent/Agent/handle_exception/end/_80_recover.py", RECOVER)
    agent = Agent(nb, model=[{"content": "", "error": "auth"}, answer("recovered fine")])
    turn = agent.ask("go")
    assert turn.text == "recovered fine"
    assert agent.data["recovered"] == "ModelError"
    assert "retrying after ModelError" in str(agent.calls[-1].messages)


def test_without_a_handler_the_error_ends_the_turn_as_before(nb: Path) -> None:
    import pytest
    from a0nb.errors import ModelError
    agent = Agent(nb, model=[{"content": "", "error": "auth"}, answer("never")])
    with pytest.raises(ModelError):
        agent.ask("go")


STREAM_END = '''
from helpers.extension import Extension
from agent import LoopData


class StreamEnd(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        item = loop_data.params_temporary["log_item_generating"]
        assert self.agent.loop_data is loop_data  # upstream's agent.loop_data: the monologue in progress
        item.update(content="streamed", kvps={"pass": loop_data.iteration})
        self.agent.set_data("items", (self.agent.get_data("items") or []) + [item.heading])
'''


def test_each_loop_pass_opens_upstreams_generating_log_item(nb: Path) -> None:
    _put(nb, "extensions/response_stream_end/_15_end.py", STREAM_END)
    agent = Agent(nb, model=[tool_reply("response", text="hi")])
    assert agent.ask("go").text == "hi"
    view = __import__("a0nb.compat.agent", fromlist=["Agent"]).Agent.of(agent)
    items = [i for i in view.context.log.logs if i.type == "agent"]
    assert agent.data["items"] == ["A0: Calling LLM..."]
    assert [(i.content, i.kvps) for i in items] == [("streamed", {"pass": 0})]


# the methods upstream's agent.py makes @extensible that a0nb's Agent has (same names; a0nb's signatures)
EXTENSIBLE = ("monologue", "prepare_prompt", "get_system_prompt", "read_prompt", "parse_prompt", "call_chat_model",
              "call_utility_model", "hist_add_message", "hist_add_user_message", "hist_add_ai_response",
              "hist_add_warning", "hist_add_tool_result", "get_tool", "handle_exception")

COUNTER = '''
from helpers.extension import Extension


class Count(Extension):
    def execute(self, data: dict = {{}}, **kwargs):
        seen = self.agent.get_data("points") or {{}}
        seen["{method}/{edge}"] = seen.get("{method}/{edge}", 0) + 1
        self.agent.set_data("points", seen)
'''

ASYNC_COUNTER = COUNTER.replace("    def execute", "    async def execute")


def test_upstream_extensible_agent_methods_have_their_function_points(nb: Path) -> None:
    import asyncio
    import inspect
    from a0nb.engine.agent import Agent as EngineAgent
    for method in EXTENSIBLE:
        is_async = inspect.iscoroutinefunction(getattr(EngineAgent, method))
        for edge in ("start", "end"):
            _put(nb, f"extensions/python/_functions/agent/Agent/{method}/{edge}/_10_count.py",
                 (ASYNC_COUNTER if is_async else COUNTER).format(method=method, edge=edge))
    (nb / "util.yaml").write_text("- 'a summary'\n", encoding="utf-8")
    agent = Agent(nb, model=[tool_reply("nope"), tool_reply("flaky"), answer("done")], utility_model="scripted:util.yaml")

    def flaky() -> str:
        """Fails in a way the model can repair."""
        from a0nb.errors import RepairableError
        raise RepairableError("try again")
    agent.register_tool(flaky)
    agent.hist_add_warning("a warning")
    assert agent.ask("go").text == "done"
    assert asyncio.run(agent.call_utility_model("sys", "msg")) == "a summary"
    seen = agent.data["points"]
    missing = [f"{m}/{e}" for m in EXTENSIBLE for e in ("start", "end") if not seen.get(f"{m}/{e}")]
    assert not missing, f"never fired: {missing}"
