"""Where Crystal Lattice plugins are found: a ProviderPlugin's `name` in providers/*.py is a model prefix
(notebook, profile, plugin); extensions and features run in file-name order, a higher root's file of the same
name wins; tool plugins in tools/ are tools; register_provider/register_feature/register_tool from Python."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from a0nb import Agent
from a0nb.ext import FeaturePlugin, ProviderExtensionPlugin, ProviderPlugin, ToolPlugin
from a0nb.providers.stream import complete
from a0nb.testing import answer
from cl_seed import block

MSGS = [{"role": "user", "content": "hi"}]

# A provider whose reply is a valid tool request, so a whole agent turn runs on it.
ANSWERING = '''
from agent_core.types import ProviderPlugin


class Answering(ProviderPlugin):
    name = "answering"

    def init(self, config):
        return {"config": config}

    def call_api(self, native_messages, state):
        text = state.get("text", "") + "|" + state["config"].get("model", "")
        final = {"role": "assistant", "content": '{"tool_name": "response", "tool_args": {"text": "%s"}}' % text}
        return [], [final], [*native_messages, final], state
'''


def appending(tag: str, kind: str = "extension") -> str:
    """An extension (or feature) file that appends `tag` to state["text"] in init: the run order is visible."""
    base = "ProviderExtensionPlugin" if kind == "extension" else "FeaturePlugin"
    body = ("    def process_chunk(self, chunk, partials, finals, natives, state):\n"
            "        return partials, finals, natives, state\n") if kind == "extension" else (
            "    def finalize(self, finals, natives, state):\n        return finals, natives, state\n")
    return (f"from agent_core.types import {base}\n\n\nclass Add_{tag}({base}):\n"
            f"    def init(self, config, state):\n        return {{**state, 'text': state.get('text', '') + '{tag}'}}\n\n"
            + body)


def _reply(agent: Agent) -> Any:
    return asyncio.run(complete(agent.provider("chat"), MSGS, agent.model_config("chat"), extensions=[]))


def test_a_named_provider_class_is_the_model_prefix_and_a_whole_turn_runs_on_it(nb: Path) -> None:
    (nb / "providers").mkdir()
    (nb / "providers" / "answering.py").write_text(ANSWERING)
    agent = Agent(nb, model="answering:model-7")
    turn = agent.ask("go")
    assert turn.text == "|model-7"
    assert turn.calls[0].model == "answering:model-7"


def test_extensions_and_features_run_in_file_name_order(nb: Path) -> None:
    (nb / "providers").mkdir()
    (nb / "features").mkdir()
    (nb / "providers" / "answering.py").write_text(ANSWERING)
    (nb / "providers" / "_20_b.py").write_text(appending("B"))
    (nb / "providers" / "_10_a.py").write_text(appending("A"))
    (nb / "features" / "z_last.py").write_text(appending("Z", "feature"))
    (nb / "features" / "m_mid.py").write_text(appending("M", "feature"))
    agent = Agent(nb, model="answering:m")
    assert agent.ask("go").text == "ABMZ|m"  # extensions first (file order), then features (file order)


def test_a_notebook_file_overrides_a_plugin_file_of_the_same_name(nb: Path) -> None:
    plugin = nb / "plugins" / "demo"
    (plugin / "providers").mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: demo\n")
    (plugin / "providers" / "answering.py").write_text(ANSWERING)
    (plugin / "providers" / "_10_a.py").write_text(appending("PLUGIN"))
    agent = Agent(nb, model="answering:m")
    assert agent.ask("go").text == "PLUGIN|m"  # a plugin's providers/ folder counts
    (nb / "providers").mkdir()
    (nb / "providers" / "_10_a.py").write_text(appending("NOTEBOOK"))  # picked up by the next ask
    assert agent.ask("again").text == "NOTEBOOK|m"


def test_a_profile_folder_provides_providers(nb: Path) -> None:
    prof = nb / "agents" / "default" / "providers"
    prof.mkdir(parents=True)
    (prof / "answering.py").write_text(ANSWERING)
    assert Agent(nb, model="answering:p").ask("go").text == "|p"


def test_a_tool_plugin_in_tools_is_a_tool_and_keeps_its_own_state(nb: Path) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "counter.py").write_text(
        "from agent_core.types import ToolPlugin\n\n"
        "class Counter(ToolPlugin):\n"
        "    def init(self, config):\n        return {'n': 0}\n"
        "    def get_tool_schemas(self, state):\n"
        "        return [{'type': 'function', 'function': {'name': 'count', 'description': 'Count calls.',"
        " 'parameters': {'type': 'object', 'properties': {}}}}]\n"
        "    def execute_tool(self, tool_name, payload, state, **kw):\n"
        "        state['n'] += 1\n        return {'success': True, 'result': state['n'], 'kind': kw['payload_kind']}\n"
        "    def format_tool_result(self, result, state):\n        return f\"count {result['result']} ({result['kind']})\"\n")
    call = '{"tool_name": "count", "tool_args": {"step": %d}}'
    agent = Agent(nb, model=[call % 1, call % 2, answer("done")])
    turn = agent.ask("count twice")
    assert [c.tool_result for c in turn.calls[:2]] == ["count 1 (json)", "count 2 (json)"]
    assert agent.tools.available()["counter"].description == "Count calls."


def test_registration_from_python(nb: Path) -> None:
    log: list[str] = []

    class Cell(ProviderPlugin):
        name = "cell"

        def init(self, config: dict[str, Any]) -> dict[str, Any]:
            return {}

        def call_api(self, native: Any, state: Any) -> Any:
            text = "registered" + state.get("mark", "")
            final = {"role": "assistant", "content": json.dumps({"tool_name": "shout", "tool_args": {"text": text}})}
            return [], [final], [*native, final], state

    class Mark(ProviderExtensionPlugin):
        def init(self, config: Any, state: Any) -> Any:
            return {**state, "mark": "+ext"}

        def process_chunk(self, chunk: Any, partials: Any, finals: Any, natives: Any, state: Any) -> Any:
            return partials, finals, natives, state

    class Seen(FeaturePlugin):
        def init(self, config: Any, state: Any) -> Any:
            return state

        def finalize(self, finals: Any, natives: Any, state: Any) -> Any:
            log.append("feature finalize")
            return finals, natives, state

    class Shout(ToolPlugin):
        def get_tool_schemas(self, state: Any) -> Any:
            return [{"type": "function", "function": {"name": "shout", "parameters": {"type": "object"}}}]

        def execute_tool(self, tool_name: Any, payload: Any, state: Any, **kw: Any) -> Any:
            return {"success": True, "result": payload["text"].upper()}

        def format_tool_result(self, result: Any, state: Any) -> str:
            return result["result"]

    agent = Agent(nb, model="cell:x")
    agent.register_provider(Cell, extensions=[Mark])
    agent.register_feature(Seen)
    agent.register_tool(Shout)
    reply = _reply(agent)
    assert json.loads(reply.content)["tool_args"]["text"] == "registered+ext" and log == ["feature finalize"]
    info = agent.tools.resolve("shout")
    assert info is not None and info.kind == "plugin" and info.root_label == "registered in the notebook"


def test_percent_a0_model_selects_a_seed_provider(tmp_path: Path, monkeypatch: Any) -> None:
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / ".ipython"))
    (tmp_path / "providers").mkdir()
    (tmp_path / "providers" / "echo.py").write_text(block("EchoProvider"))
    cfg = Config()
    cfg.HistoryManager.hist_file = ":memory:"
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance(config=cfg)
    shell.display_pub = CapturingDisplayPublisher()
    try:
        shell.run_line_magic("load_ext", "a0nb")
        shell.run_line_magic("a0", "model echo:echo-1")
        from a0nb.notebook.magics import get_magics
        agent = get_magics(shell).agent
        assert agent.model_spec("chat") == "echo:echo-1"
        assert _reply(agent).content == "Echo: hi"
        shell.run_line_magic("a0", "ask hello")  # the echo is no agent: the loop stops it after its misformat limit
        first = agent.calls[0]
        assert first.model == "echo:echo-1" and first.response.startswith('Echo: {"user_message": "hello"}')
        assert "without a valid tool request" in str(shell.display_pub.outputs)
        shell.run_line_magic("unload_ext", "a0nb")
    finally:
        import atexit
        atexit.unregister(shell.atexit_operations)
        InteractiveShell.clear_instance()
