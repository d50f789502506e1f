"""The agent views: prompt and extras from the last call, history with compactions, skills (available,
loaded, recalled, reattached), tools and extensions with roots and overrides, paths, diagnostics."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from inspector_nb import make_notebook

from a0nb import Agent
from a0nb.inspector import (render_diagnostics, render_extensions, render_extras, render_history, render_paths,
                            render_prompt, render_skills, render_tools)
from a0nb.engine.records import Part

SKILL = "---\nname: rows-helper\ndescription: Print rows of a table neatly.\n---\nUse head() first.\n"


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Agent:
    folder = make_notebook(tmp_path / "nb")
    monkeypatch.chdir(folder)
    return Agent(folder, model="scripted:replies.yaml")


def test_views_before_any_call(fresh: Agent) -> None:
    for view in (render_prompt, render_extras):
        r = view(fresh)
        assert r.text.endswith("no calls yet") and "No model calls yet" in r.html
    assert render_history(fresh).text.startswith("History: 0 bulks, 0 sealed topics")


def test_prompt_sections_with_provenance(scripted: tuple[Any, Any]) -> None:
    agent, _ = scripted
    r = render_prompt(agent)
    assert r.text.splitlines()[0].startswith("System prompt of call #3: 3 sections")
    assert "agent.system.main.md (notebook)" in r.html and "_10_main_prompt" in r.html
    assert "overrode" in r.html and "&lt;a0nb&gt;/prompts/agent.system.main.md" in r.html
    assert "You work in the notebook folder" in r.html
    assert r._repr_mimebundle_()[1] == {"a0": {"call": 3}}


def test_extras_with_hooks_and_kinds(scripted: tuple[Any, Any]) -> None:
    agent, _ = scripted
    r = render_extras(agent)
    assert "  notebook_note (persistent) ← _50_notebook_note" in r.text
    assert "  current_datetime (temporary) ← _60_include_current_datetime" in r.text
    assert "Rows are numbered from 0." in r.html and "2026-01-01 00:00:00" in r.html
    assert "./extensions/message_loop_prompts_after/_50_notebook_note.py" in r.html


def test_history_topics_and_messages(scripted: tuple[Any, Any]) -> None:
    agent, _ = scripted
    r = render_history(agent)
    assert "topic 1:" in r.text and "current topic:" in r.text
    assert "tool_result" in r.html and "row 39" in r.html and "Hello from the test notebook." in r.html


def test_skills_available_loaded_recalled_reattached(scripted: tuple[Any, Any]) -> None:
    agent, turn = scripted
    (agent.workdir / "skills" / "rows-helper").mkdir(parents=True)
    (agent.workdir / "skills" / "rows-helper" / "SKILL.md").write_text(SKILL)
    agent.loaded_skills().append("rows-helper")
    last = turn.calls[-1]
    extra = Part("extras", "extras: relevant_skills", "- rows-helper: Print rows of a table neatly.", 9,
                 len(last.messages) - 1, "set by _63", (), "_63_recall_relevant_skills", "temporary")
    skill = Part("skill", "skill: rows-helper", "Use head() first.", 5, len(last.messages) - 1,
                 "skill rows-helper reattached after compaction", (), "_65_include_loaded_skills", "reattached")
    agent.models.records[-1] = dataclasses.replace(last, parts=[*last.parts, extra, skill])
    r = render_skills(agent)
    assert "1 loaded, 1 reattached" in r.text.splitlines()[0]
    assert "reattached: rows-helper (5 tokens)" in r.text and "loaded: rows-helper" in r.text
    assert "rows-helper" in r.html and ">notebook<" in r.html and "./skills/rows-helper/SKILL.md" in r.html
    assert "Recalled for call #3" in r.html and "Reattached after compaction in call #3 · 5 tokens" in r.html


def test_tools_with_roots_and_overrides(fresh: Agent) -> None:
    tools = fresh.workdir / "tools"
    tools.mkdir()
    (tools / "response.py").write_text("from a0nb import Tool, Response\n\n\nclass Answer(Tool):\n"
                                       "    description = 'Answer loudly.'\n\n"
                                       "    async def execute(self, text='', **kw):\n"
                                       "        return Response(text.upper(), break_loop=True)\n")

    def shout(text: str) -> str:
        """Shout the text."""
        return text.upper()
    fresh.register_tool(shout)
    r = render_tools(fresh)
    assert "  response (class, notebook)" in r.text and "  shout (function, registered in the notebook)" in r.text
    assert "./tools/response.py" in r.html and "&lt;a0nb&gt;/tools/response.py" in r.html  # what it overrode
    assert "Answer loudly." in r.html and "Shout the text." in r.html


def test_extensions_in_point_order_with_overrides_and_registrations(fresh: Agent) -> None:
    fresh.register_extension("monologue_start", lambda loop_data: None, name="_10_from_cell")
    r = render_extensions(fresh)
    text = r.text
    assert text.index("agent_init") < text.index("monologue_start") < text.index("system_prompt")
    assert "registered in the notebook" in r.html
    one = render_extensions(fresh, "message_loop_prompts_after")
    assert one.text.startswith("Extensions at message_loop_prompts_after")
    assert "_63_recall_relevant_skills" in one.html
    assert "./extensions/message_loop_prompts_after/_63_recall_relevant_skills.py" in one.html
    assert "&lt;a0nb&gt;/extensions/message_loop_prompts_after/_63_recall_relevant_skills.py" in one.html  # overrode


def test_paths_relative_with_absolute_in_metadata(fresh: Agent) -> None:
    r = render_paths(fresh)
    assert "notebook                 ." in r.text and "$A0NB_HOME" in r.text and "<a0nb>" in r.text
    assert str(fresh.workdir) not in r.html
    assert str(fresh.workdir) in r._repr_mimebundle_()[1]["a0"]["paths"]


def test_diagnostics_name_file_and_fix(fresh: Agent) -> None:
    assert "No diagnostics" in render_diagnostics(fresh).html
    bad = fresh.workdir / "extensions" / "monologue_start"
    bad.mkdir(parents=True)
    (bad / "_10_broken.py").write_text("x = 1\n")
    fresh.refresh()
    fresh.extensions.resolve("monologue_start")
    r = render_diagnostics(fresh)
    assert "error: ./extensions/monologue_start/_10_broken.py: defines no Extension subclass" in r.text
    assert "fix: define" in r.html and str(fresh.workdir) not in r.html


def test_provider_extensions_listed_with_gating_and_whether_the_chat_model_uses_them(fresh: Agent) -> None:
    r = render_extensions(fresh)
    assert "provider extensions: _10_think_tags.ThinkTags, _20_native_tool_calls.NativeToolCalls" in r.text
    assert "&lt;a0nb&gt;/providers/_10_think_tags.py" in r.html and "not with tags: replayed" in r.html
    assert "needs tags: tools" in r.html
    fresh.configure(model="openai/gpt-4o-mini")  # litellm takes native tools; think tags apply to every provider
    html = render_extensions(fresh).html
    think = html[html.index("_10_think_tags.ThinkTags"):]
    native = html[html.index("_20_native_tool_calls.NativeToolCalls"):]
    assert think.index(">active<") < think.index("</tr>")
    assert native.index(">active<") < native.index("</tr>")
