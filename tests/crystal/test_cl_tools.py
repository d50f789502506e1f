"""Tool plugins in a turn: `stream_tool` parts are shown live (tool_output_update) and never enter history, the
final item is the result (`format_tool_result` for the model), `to_display_format` reaches displays as
`metadata.display`; the seed Calculator's commented hooks, switched on, run as written."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from a0nb import Agent
from a0nb.ext import ToolPlugin
from a0nb.testing import answer
from cl_seed import block, with_ext_import, with_optional_hooks

CALL = '{"thoughts": ["t"], "headline": "h", "tool_name": "add", "tool_args": {"a": 1, "b": 2}}'


def _watch(agent: Agent) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    agent.register_extension("tool_output_update", lambda agent, ctx, **kw: seen.append(dict(ctx)))
    return seen


def test_the_seed_calculator_with_its_stream_and_display_hooks(nb: Path) -> None:
    code = with_optional_hooks(block("Calculator"))
    # the hooks' annotations name Iterator, which the example's typing import line lacks: that line grows
    code = code.replace("from typing import Any, Dict, List\n", "from typing import Any, Dict, Iterator, List\n", 1)
    (nb / "tools").mkdir()
    (nb / "tools" / "calculator.py").write_text(code)
    agent = Agent(nb, model=[CALL, answer("done")])
    seen = _watch(agent)
    turn = agent.ask("add")
    assert turn.calls[0].tool_result == "Result: 42"  # stream_tool's final result, not execute_tool's 3
    assert [s["content"] for s in seen] == ["working...", "Result: 42"]
    assert seen[-1]["metadata"] == {"display": {"type": "text", "content": "Result: 42"}}
    history = str([m.content for m in agent.history.messages()])
    assert "working..." not in history and "Result: 42" in history


def test_parts_stream_live_in_order_and_only_the_result_enters_history(nb: Path) -> None:
    class Shell(ToolPlugin):
        def get_tool_schemas(self, state: Any) -> Any:
            return [{"type": "function", "function": {"name": "run", "description": "Run a command."}}]

        def execute_tool(self, tool_name: Any, payload: Any, state: Any, **kw: Any) -> Any:
            raise AssertionError("stream_tool is used when the tool has one")

        def stream_tool(self, tool_name: Any, payload: Any, state: Any, **kw: Any) -> Any:
            for i in range(3):
                yield {"part": {"type": "text", "content": f"line {i}"}}
            yield {"success": True, "result": "exit 0", "command": payload["cmd"]}

        def format_tool_result(self, result: Any, state: Any) -> str:
            return f"{result['command']}: {result['result']}"

        def to_display_format(self, text: str, result: Any, state: Any) -> Any:
            return {"type": "text", "content": f"$ {result['command']}\n{text}", "single_line": text}

    call = '{"tool_name": "run", "tool_args": {"cmd": "ls"}}'
    agent = Agent(nb, model=[call, answer("listed")])
    agent.register_tool(Shell)
    seen = _watch(agent)
    turn = agent.ask("list")
    assert [s["content"] for s in seen[:3]] == ["line 0", "line 0\nline 1", "line 0\nline 1\nline 2"]
    assert seen[3]["metadata"]["display"]["single_line"] == "ls: exit 0"
    assert turn.calls[0].tool_result == "ls: exit 0" and turn.text == "listed"
    history = str([m.content for m in agent.history.messages()])
    assert "line 1" not in history and "$ ls" not in history


def test_a_stream_without_a_final_result_is_a_clear_tool_error(nb: Path) -> None:
    class OnlyParts(ToolPlugin):
        def get_tool_schemas(self, state: Any) -> Any:
            return [{"type": "function", "function": {"name": "parts"}}]

        def execute_tool(self, tool_name: Any, payload: Any, state: Any, **kw: Any) -> Any:
            return {}

        def stream_tool(self, tool_name: Any, payload: Any, state: Any, **kw: Any) -> Any:
            yield {"part": "only a part"}

    agent = Agent(nb, model=['{"tool_name": "parts", "tool_args": {}}', answer("ok")])
    agent.register_tool(OnlyParts)
    turn = agent.ask("x")
    assert "stream_tool" in (turn.calls[0].tool_result or "") and "yielded no final result" in turn.calls[0].tool_result


def test_execute_tool_gets_the_payload_first_with_its_metadata(nb: Path) -> None:
    got: dict[str, Any] = {}

    class Payload(ToolPlugin):
        def get_tool_schemas(self, state: Any) -> Any:
            return [{"type": "function", "function": {"name": "echo_payload"}}]

        def execute_tool(self, tool_name: Any, payload: Any, state: Any, *, payload_kind: Any = None,
                         payload_format: Any = None, payload_metadata: Any = None, tool_call: Any = None) -> Any:
            got.update(name=tool_name, payload=payload, kind=payload_kind, call=tool_call)
            return {"success": True, "result": "ok"}

    agent = Agent(nb, model=['{"tool_name": "echo_payload", "tool_args": {"x": 1}}', answer("done")])
    agent.register_tool(Payload)
    agent.ask("x")
    assert got == {"name": "echo_payload", "payload": {"x": 1}, "kind": "json",
                   "call": {"name": "echo_payload", "arguments": {"x": 1}}}


def test_percent_a0_tools_name_shows_the_dox_companion(tmp_path: Path, monkeypatch: Any) -> None:
    from IPython.core.error import UsageError
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config
    import pytest
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / ".ipython"))
    cfg = Config()
    cfg.HistoryManager.hist_file = ":memory:"
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance(config=cfg)
    try:
        shell.run_line_magic("load_ext", "a0nb")
        shell.run_line_magic("config", "A0.model = 'scripted:none.yaml'")
        with capture_output() as out:
            shell.run_line_magic("a0", "tools code_execution")
        shown = out.stdout + "".join(str(o.data.get("text/html", "")) for o in out.outputs)
        assert "Purpose" in shown and "break_loop" in shown and "code_execution.py" in shown
        with pytest.raises(UsageError, match="no tool 'nope'; tools: .*response"):
            shell.run_line_magic("a0", "tools nope")
        shell.run_line_magic("unload_ext", "a0nb")
    finally:
        import atexit
        atexit.unregister(shell.atexit_operations)
        InteractiveShell.clear_instance()


def test_every_bundled_core_tool_has_its_dox_companion() -> None:
    """The packaging test checks the headings; this one checks the inspector finds each companion."""
    from a0nb.inspector import render_tools
    from a0nb.resources import bundled_root
    tools = sorted(p.stem for p in (bundled_root() / "tools").glob("*.py") if not p.name.startswith("_"))
    assert "code_execution" in tools and "response" in tools
    agent = Agent(Path.cwd(), model=[answer("x")])
    for name in tools:
        rendering = render_tools(agent, name)
        assert "no DOX companion" not in rendering.text, f"tools/{name}.py lacks tools/{name}.py.dox.md"
        assert "Purpose" in rendering.html


class _Router(ToolPlugin):
    """Declares one schema but takes any `ext_*` name through the seed's optional routing hook."""

    def get_tool_schemas(self, state: Any) -> Any:
        return [{"type": "function", "function": {"name": "router", "description": "Routes ext_* calls."}}]

    def can_handle_tool_call(self, tool_name: Any, payload: Any, state: Any, **kw: Any) -> Any:
        return True if str(tool_name).startswith("ext_") else None

    def execute_tool(self, tool_name: Any, payload: Any, state: Any, **kw: Any) -> Any:
        return {"success": True, "result": f"{tool_name} got {payload}"}

    def format_tool_result(self, result: Any, state: Any) -> str:
        return result["result"]

    def format_tool_call_preview(self, tool_name: Any, payload: Any, state: Any, **kw: Any) -> str:
        return f"about to run {tool_name} on {sorted(payload)}"


def test_can_handle_tool_call_takes_a_name_no_schema_declares(nb: Path) -> None:
    agent = Agent(nb, model=['{"tool_name": "ext_lookup", "tool_args": {"q": 1}}',
                             '{"tool_name": "other_thing", "tool_args": {}}', answer("done")])
    agent.register_tool(_Router)
    turn = agent.ask("x")
    assert turn.calls[0].tool_result == "ext_lookup got {'q': 1}"
    assert "other_thing" in (turn.calls[1].tool_result or "") and "got" not in (turn.calls[1].tool_result or "")
    from a0nb.ext import LatticeCore
    core = LatticeCore()
    core.register_tool(_Router)
    [msg] = core.execute_tool_calls([{"id": "c", "function": {"name": "ext_x", "arguments": "{}"}}], {})
    assert msg["content"] == "ext_x got {}"
    [msg] = core.execute_tool_calls([{"id": "d", "function": {"name": "nope", "arguments": "{}"}}], {})
    assert msg["content"] == "Error: no tool named 'nope'"


def test_a_raising_can_handle_tool_call_is_a_diagnostic_naming_the_contract(nb: Path) -> None:
    class Broken(_Router):
        def can_handle_tool_call(self, tool_name: Any, payload: Any, state: Any, **kw: Any) -> Any:
            raise RuntimeError("router down")
    agent = Agent(nb, model=['{"tool_name": "ext_lookup", "tool_args": {}}', answer("went on")])
    agent.register_tool(Broken)
    assert agent.ask("x").text == "went on"
    [diag] = [d.message for d in agent.diagnostics.of("tool") if "router down" in d.message]
    assert "Broken.can_handle_tool_call" in diag and "-> bool | None" in diag


def test_format_tool_call_preview_is_shown_first_in_the_live_view(nb: Path) -> None:
    agent = Agent(nb, model=['{"tool_name": "ext_run", "tool_args": {"b": 1, "a": 2}}', answer("done")])
    agent.register_tool(_Router)
    seen = _watch(agent)
    agent.ask("x")
    assert seen[0]["content"] == "about to run ext_run on ['a', 'b']"
    assert seen[0]["metadata"] == {"preview": "about to run ext_run on ['a', 'b']"}
    history = str([m.content for m in agent.history.messages()])
    assert "about to run" not in history


def test_get_config_schema_defaults_reach_the_tool_init(nb: Path) -> None:
    class Ruler(ToolPlugin):
        def get_config_schema(self) -> Any:
            return {"unit": {"type": "string", "default": "cm"}}

        def init(self, config: Any) -> Any:
            return {"unit": config["unit"]}

        def get_tool_schemas(self, state: Any) -> Any:
            return [{"type": "function", "function": {"name": "measure"}}]

        def execute_tool(self, tool_name: Any, payload: Any, state: Any, **kw: Any) -> Any:
            return {"success": True, "result": f"3 {state['unit']}"}

        def format_tool_result(self, result: Any, state: Any) -> str:
            return result["result"]
    agent = Agent(nb, model=['{"tool_name": "measure", "tool_args": {}}', answer("done")])
    agent.register_tool(Ruler)
    assert agent.ask("x").calls[0].tool_result == "3 cm"
    from a0nb.ext import LatticeCore
    core = LatticeCore()
    core.register_tool(Ruler)
    call = [{"id": "c", "function": {"name": "measure", "arguments": "{}"}}]
    assert core.execute_tool_calls(call, {})[0]["content"] == "3 cm"
    assert core.execute_tool_calls(call, {"unit": "in"})[0]["content"] == "3 in"
