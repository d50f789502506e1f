"""Tools through the hierarchy: three forms, overrides, import errors falling through, prompts."""
from __future__ import annotations

from pathlib import Path

from a0nb import Agent
from a0nb.testing import answer, tool_reply

CLASS_TOOL = """from a0nb import Response, Tool
class Shout(Tool):
    async def execute(self, text="", **kwargs):
        return Response(message=text.upper() + " ({tag})")
"""


def test_notebook_tool_overrides_bundled_response(nb: Path) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "response.py").write_text(
        "from a0nb import Response, Tool\nclass Mine(Tool):\n"
        "    async def execute(self, text='', **kw):\n        return Response(message='NB:' + text, break_loop=True)\n"
        "    async def after_execution(self, response, **kw):\n        return None\n")
    agent = Agent(nb, model=[answer("hi")])
    assert agent.ask("x").text == "NB:hi"
    info = agent.tools.resolve("response")
    assert info.root_label == "notebook" and info.overrode and info.overrode[0].name == "response.py"


def test_three_tool_forms_from_files(nb: Path) -> None:
    tools = nb / "tools"
    tools.mkdir()
    (tools / "shout.py").write_text(CLASS_TOOL.format(tag="class"))
    (tools / "add.py").write_text('def add(a: int, b: int) -> int:\n    """Add two numbers.\n\n    a: first\n    b: second\n    """\n    return a + b\n')
    (tools / "lattice.py").write_text(
        "class Lattice:\n"
        "    def get_tool_schemas(self, state):\n"
        "        return [{'name': 'lattice', 'description': 'Reverse text.', 'parameters': {'type': 'object', "
        "'properties': {'text': {'type': 'string'}}}}]\n"
        "    def execute_tool(self, name, args, state):\n        return args['text'][::-1]\n"
        "    def format_tool_result(self, result, state):\n        return 'reversed: ' + result\n"
        "    def to_display_format(self, result):\n        return {'text/plain': result}\n")
    agent = Agent(nb, model=[tool_reply("shout", text="hey"), tool_reply("add", a=2, b=3),
                             tool_reply("lattice", text="abc"), answer("done")])
    turn = agent.ask("use them")
    assert [c.tool_result for c in turn.calls[:3]] == ["HEY (class)", "5", "reversed: cba"]
    available = agent.tools.available()
    assert available["add"].kind == "function" and available["add"].schema["required"] == ["a", "b"]
    assert available["lattice"].kind == "plugin" and available["lattice"].description == "Reverse text."
    system = turn.calls[0].messages[0]["content"]
    assert "### add" in system and "Add two numbers." in system and "### lattice" in system
    history_text = str([m.content for m in agent.history.messages()])
    assert "text/plain" not in history_text  # the display form never reaches history


def test_broken_higher_copy_falls_through_with_diagnostic(nb: Path) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "response.py").write_text("raise RuntimeError('broken at import')\n")
    agent = Agent(nb, model=[answer("still works")])
    assert agent.ask("x").text == "still works"
    [diag] = [d for d in agent.diagnostics if d.area == "tool"]
    assert diag.path.endswith("response.py") and "broken at import" in diag.message and diag.line == 1


def test_tool_prompt_fragments_highest_copy_wins(nb: Path) -> None:
    (nb / "prompts").mkdir()
    (nb / "prompts" / "agent.system.tool.response.md").write_text("### response\nMY OWN RESPONSE DOC\n")
    (nb / "prompts" / "agent.system.tool.zzz_extra.md").write_text("### zzz_extra\nEXTRA TOOL DOC\n")
    agent = Agent(nb, model=[answer("ok")])
    call = agent.ask("x").calls[0]
    system = call.messages[0]["content"]
    assert "MY OWN RESPONSE DOC" in system and system.index("MY OWN RESPONSE DOC") < system.index("EXTRA TOOL DOC")
    tools_part = next(p for p in call.parts if p.label == "system: tools")
    assert any("agent.system.tool.response.md (notebook)" in f for f in tools_part.files)


def test_per_file_tool_prompt_kwargs(nb: Path) -> None:
    (nb / "prompts").mkdir()
    (nb / "prompts" / "agent.system.tool.custom.md").write_text("### custom\nlimit is {{limit}}\n")
    ext = nb / "extensions" / "system_prompt"
    ext.mkdir(parents=True)
    (ext / "_09_kwargs.py").write_text(
        "from a0nb import Extension\nclass K(Extension):\n    def execute(self, **kw):\n"
        "        self.agent.tool_prompt_kwargs = {'agent.system.tool.custom.md': {'limit': 7}}\n")
    agent = Agent(nb, model=[answer("ok")])
    assert "limit is 7" in agent.ask("x").calls[0].messages[0]["content"]


def test_registered_tool_is_in_prompt_and_labelled(nb: Path) -> None:
    agent = Agent(nb, model=[tool_reply("double", x=21), answer("ok")])

    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    info = agent.register_tool(double)
    assert info.root_label == "registered in the notebook"
    turn = agent.ask("double 21")
    assert turn.calls[0].tool_result == "42"
    assert "### double" in turn.calls[0].messages[0]["content"]


def test_example_profile_teaches_overrides(nb: Path) -> None:
    agent = Agent(nb, model=[answer("hello")], profile="_example")
    turn = agent.ask("hi")
    assert turn.text.startswith("[example profile] ")
    call = turn.calls[0]
    assert any(p.label == "extras: example_note" and p.extension == "_80_example_note" for p in call.parts)
    main = next(p for p in call.parts if p.label == "system: main prompt")
    roles = [f for f in main.files if f.startswith("agent.system.main.role.md")]
    assert roles == ["agent.system.main.role.md (bundled-profile)", "agent.system.main.role.md (bundled)"] or \
        len(roles) == 2


def test_profile_switch_and_unknown_profile(nb: Path) -> None:
    import pytest
    from a0nb.errors import ConfigError
    agent = Agent(nb, model=[answer("ok")])
    agent.set_profile("developer")
    assert agent.profile == "developer"
    with pytest.raises(ConfigError) as info:
        agent.set_profile("nope")
    assert "researcher" in str(info.value)


def test_prompt_override_at_several_levels(nb: Path, tmp_path: Path) -> None:
    import os
    home = Path(os.environ["A0NB_HOME"])
    (home / "prompts").mkdir(parents=True)
    (home / "prompts" / "agent.system.main.role.md").write_text("{{include original}}\nUSER LEVEL")
    (nb / "prompts").mkdir()
    (nb / "prompts" / "agent.system.main.role.md").write_text("{{include original}}\nNOTEBOOK LEVEL")
    (nb / ".a0proj" / "prompts").mkdir(parents=True)
    (nb / ".a0proj" / "prompts" / "agent.system.main.role.md").write_text("{{include original}}\nPROJECT LEVEL")
    agent = Agent(nb, model=[answer("ok")])
    system = agent.ask("x").calls[0].messages[0]["content"]
    a, b, c = (system.index(t) for t in ("USER LEVEL", "NOTEBOOK LEVEL", "PROJECT LEVEL"))
    assert a < b < c


SAVE_EXT = """from a0nb import Extension


class Saved(Extension):
    def execute(self, data=None, **kwargs):
        data["file"] = "results/1.txt"  # what Agent Zero's _90_save_tool_call_file adds for a long result
"""

NOTE_TOOL = """from a0nb import Response, Tool


class Note(Tool):
    async def execute(self, **kwargs):
        return Response(message="noted", additional={"ticket": 42})
"""


def test_keys_an_extension_adds_to_a_tool_result_reach_the_model_and_the_caller_s_stay_metadata(nb: Path) -> None:
    (nb / "extensions" / "hist_add_tool_result").mkdir(parents=True)
    (nb / "extensions" / "hist_add_tool_result" / "_90_saved.py").write_text(SAVE_EXT)
    (nb / "tools").mkdir()
    (nb / "tools" / "note.py").write_text(NOTE_TOOL)
    agent = Agent(nb, model=[tool_reply("note"), answer("done")])
    turn = agent.ask("note it")
    [result] = [m for m in agent.history.messages() if m.kind == "tool_result"]
    assert result.content == {"tool_name": "note", "tool_result": "noted", "file": "results/1.txt"}
    assert result.metadata["ticket"] == 42  # (a0nb's Response.additional: history metadata, as documented)
    assert '"file": "results/1.txt"' in turn.calls[-1].messages[-1]["content"]


def test_agent_zeros_code_execution_tool_name_reaches_a0nbs_code_tool(nb: Path) -> None:
    """Agent Zero's prompts and skills tell the model to call `code_execution_tool`; a0nb's tool is `code_execution`."""
    agent = Agent(nb, model=[tool_reply("code_execution_tool", runtime="python", code="seen = 6 * 7\nprint(seen)"),
                             answer("done")])
    turn = agent.ask("go")
    assert agent.namespace["seen"] == 42 and turn.calls[0].tool_result.strip() == "42"
    assert turn.calls[0].tool_request["tool_name"] == "code_execution_tool"  # (the name the model used is kept)


def test_a_file_of_agent_zeros_tool_name_wins_over_the_alias(nb: Path) -> None:
    (nb / "tools").mkdir()
    (nb / "tools" / "code_execution_tool.py").write_text(
        "from a0nb import Response, Tool\n\n\nclass Mine(Tool):\n"
        "    async def execute(self, **kwargs):\n        return Response(message='my own code tool')\n")
    turn = Agent(nb, model=[tool_reply("code_execution_tool", runtime="python", code="1"), answer("done")]).ask("go")
    assert turn.calls[0].tool_result == "my own code tool"
