"""Reuse of prompt builds (system-prompt sections, the tool catalogue) and that every reuse ends when what
it was built from changes: a prompt file, an included file, a new override, a variables loader, a
variables.env value, secrets.env, a tool — edited mid-session, seen by the next step's system prompt."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from a0nb import Agent
from a0nb.files.prompts import PromptDir, PromptEngine
from a0nb.testing import answer, tool_reply


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def age(*paths: Path, seconds: int = 60) -> None:
    """Make files and folders look untouched for a while (recent writes are never cached)."""
    past = time.time() - seconds
    for p in paths:
        for q in [p, *p.rglob("*")] if p.is_dir() else [p]:
            os.utime(q, (past, past))


def rewrite(path: Path, text: str) -> None:
    """Edit in place, then keep the new text looking old too: only the stamp change can tell."""
    path.write_text(text, encoding="utf-8")
    past = time.time() - 30
    os.utime(path, (past, past))


def two_steps(nb: Path, change: Callable[[Agent], Any], **agent_args: Any) -> tuple[str, str, Agent]:
    """The system prompt of a turn's first and second step, with `change` run by a tool in between."""
    agent = Agent(nb, model=[tool_reply("change"), answer("done")] * 3, **agent_args)
    armed: list[bool] = []
    agent.register_tool(lambda: (change(agent) if armed else None) and "" or "changed", name="change")
    agent.ask("warm up")  # every reusable build is made, and reused once
    armed.append(True)
    first, second = agent.ask("go").calls
    return first.messages[0]["content"], second.messages[0]["content"], agent


def counting_renders(agent: Agent) -> list[str]:
    seen: list[str] = []
    real = agent.prompts._top
    agent.prompts._top = lambda ctx, name, as_json: seen.append(name) or real(ctx, name, as_json)  # type: ignore[method-assign]
    return seen


# ---- reuse -------------------------------------------------------------------------------------------

def test_an_unchanged_step_renders_no_system_section(nb: Path) -> None:
    agent = Agent(nb, model=[tool_reply("noop"), answer("ok")] * 2)
    agent.register_tool(lambda: "ok", name="noop")
    agent.ask("warm up")
    renders = counting_renders(agent)
    first, second = agent.ask("go").calls
    assert not [n for n in renders if n.startswith("agent.system.")]
    assert first.messages[0] == second.messages[0]
    system = [(p.label, p.text, p.source, p.files, p.overrode) for p in first.parts if p.kind == "system"]
    assert system == [(p.label, p.text, p.source, p.files, p.overrode) for p in second.parts if p.kind == "system"]
    assert any(p.label == "system: tools" and p.files for p in second.parts)  # provenance kept on reuse


def test_a_standalone_engine_builds_every_time(tmp_path: Path) -> None:
    write(tmp_path / "p" / "a.md", "A")
    age(tmp_path)
    engine = PromptEngine([PromptDir(tmp_path / "p", "p")])
    builds: list[int] = []
    for _ in range(2):
        engine.reuse("k", (), lambda: builds.append(1) or engine.render("a.md"))
    assert len(builds) == 2  # nobody watches its files: a reuse could miss an edit


def test_reuse_ends_with_inputs_invalidate_and_recent_files(tmp_path: Path) -> None:
    a = write(tmp_path / "p" / "a.md", "A")
    age(tmp_path)
    engine = PromptEngine([PromptDir(tmp_path / "p", "p")])
    engine.trust_listings = True
    builds: list[str] = []

    def build() -> str:
        builds.append("b")
        return engine.render("a.md").text

    assert [engine.reuse("k", (1,), build) for _ in range(2)] == ["A", "A"] and len(builds) == 1
    assert engine.reuse("k", (2,), build) == "A" and len(builds) == 2  # an input changed
    a.write_text("B")  # the owner's watch would call invalidate(); until then the reuse stands
    assert engine.reuse("k", (2,), build) == "A"
    engine.invalidate()
    assert engine.reuse("k", (2,), build) == "B" and len(builds) == 3
    assert engine.reuse("k", (2,), build) == "B" and len(builds) == 4  # a.md was just written: not reused


def test_nested_builds_recheck_the_inner_loaders(tmp_path: Path) -> None:
    write(tmp_path / "p" / "v.md", "{{v}}")
    write(tmp_path / "p" / "v.py", "from a0nb.ext import VariablesPlugin\nclass V(VariablesPlugin):\n"
          "    def get_variables(self, file, backup_dirs=None, **kw):\n        return {'v': kw['_agent']['v']}\n")
    age(tmp_path)
    engine = PromptEngine([PromptDir(tmp_path / "p", "p")])
    engine.trust_listings = True
    state = {"v": "one"}

    def outer() -> str:
        return "[" + engine.reuse("inner", (), lambda: engine.render("v.md", agent=state).text) + "]"

    assert engine.reuse("outer", (), outer) == "[one]"
    state["v"] = "two"  # what the loader reads changed: both builds are redone
    assert engine.reuse("outer", (), outer) == "[two]"


# ---- invalidation, through the agent ------------------------------------------------------------------

def test_prompt_file_edited_in_place(nb: Path) -> None:
    role = write(nb / "prompts" / "agent.system.main.role.md", "ROLE ONE")
    age(nb)
    first, second, _ = two_steps(nb, lambda a: rewrite(role, "ROLE TWO"))
    assert "ROLE ONE" in first and "ROLE TWO" in second and "ROLE ONE" not in second


def test_included_file_edited_in_place(nb: Path) -> None:
    write(nb / "prompts" / "agent.system.main.md", 'MAIN {{ include "mine.md" }} END')
    mine = write(nb / "prompts" / "mine.md", "INCLUDED ONE")
    age(nb)
    first, second, agent = two_steps(nb, lambda a: rewrite(mine, "INCLUDED TWO"))
    assert "MAIN INCLUDED ONE END" in first and "MAIN INCLUDED TWO END" in second
    main = next(p for p in agent.calls[-1].parts if p.label == "system: main prompt")
    assert main.files == ("agent.system.main.md (notebook)", "mine.md (notebook)")


def test_new_override_and_removed_override(nb: Path) -> None:
    role = nb / "prompts" / "agent.system.main.role.md"
    (nb / "prompts").mkdir()
    age(nb)
    first, second, agent = two_steps(nb, lambda a: write(role, "NOTEBOOK ROLE"))
    assert "NOTEBOOK ROLE" not in first and "NOTEBOOK ROLE" in second
    role.unlink()
    assert "NOTEBOOK ROLE" not in agent.ask("again").calls[0].messages[0]["content"]


def test_variables_loader_edited_and_its_value_changed(nb: Path) -> None:
    write(nb / "prompts" / "agent.system.main.role.md", "who: {{who}}")
    loader = write(nb / "prompts" / "agent.system.main.role.py", _loader("kw['_agent'].data.get('who', 'nobody')"))
    age(nb)
    first, second, agent = two_steps(nb, lambda a: a.data.update(who="Ada"))
    assert "who: nobody" in first and "who: Ada" in second  # a value that changes per step is part of the key
    rewrite(loader, _loader("'edited ' + kw['_agent'].data['who']"))
    assert "who: edited Ada" in agent.ask("again").calls[0].messages[0]["content"]


def _loader(expr: str) -> str:
    return ("from a0nb.ext import VariablesPlugin\nclass Who(VariablesPlugin):\n"
            f"    def get_variables(self, file, backup_dirs=None, **kw):\n        return {{'who': {expr}}}\n")


def test_variables_env_value_changed(nb: Path) -> None:
    write(nb / "prompts" / "agent.system.main.role.md", "colour {{COLOUR}}")
    env = write(nb / ".a0proj" / "variables.env", "COLOUR=red\n")
    age(nb)
    first, second, _ = two_steps(nb, lambda a: rewrite(env, "COLOUR=blue\n"))
    assert "colour red" in first and "- COLOUR: red" in first
    assert "colour blue" in second and "- COLOUR: blue" in second and "red\n" not in second


def test_secret_added_mid_session(nb: Path) -> None:
    (nb / ".a0proj").mkdir()
    age(nb)
    first, second, _ = two_steps(nb, lambda a: write(nb / ".a0proj" / "secrets.env", "NEW_TOKEN=abc123\n"))
    assert "§§secret(NEW_TOKEN)" not in first and "§§secret(NEW_TOKEN)" in second


def test_project_instructions_added_mid_session(nb: Path) -> None:
    (nb / ".a0proj").mkdir()
    age(nb)
    first, second, _ = two_steps(nb, lambda a: write(nb / ".a0proj" / "instructions" / "x.md", "ALWAYS BE BRIEF"))
    assert "ALWAYS BE BRIEF" not in first and "ALWAYS BE BRIEF" in second


def test_tool_prompt_file_edited_and_tool_file_added(nb: Path) -> None:
    doc = write(nb / "prompts" / "agent.system.tool.zzz.md", "### zzz\nZZZ ONE")
    (nb / "tools").mkdir()
    age(nb)
    first, second, agent = two_steps(nb, lambda a: rewrite(doc, "### zzz\nZZZ TWO"))
    assert "ZZZ ONE" in first and "ZZZ TWO" in second and "ZZZ ONE" not in second
    write(nb / "tools" / "late_tool.py", 'def late_tool(x: int) -> int:\n    """Added mid-session."""\n    return x\n')
    system = agent.ask("again").calls[0].messages[0]["content"]
    assert "### late_tool" in system and "Added mid-session." in system


def test_tool_registered_and_tool_prompt_kwargs_changed(nb: Path) -> None:
    write(nb / "prompts" / "agent.system.tool.custom.md", "### custom\nlimit is {{limit}}")
    age(nb)

    def change(agent: Agent) -> None:
        agent.register_tool(lambda: "hi", name="registered_late")
        agent.tool_prompt_kwargs["agent.system.tool.custom.md"]["limit"] = 9  # mutated in place

    agent = Agent(nb, model=[tool_reply("change"), answer("done")] * 2)
    agent.tool_prompt_kwargs = {"agent.system.tool.custom.md": {"limit": 7}}
    armed: list[bool] = []
    agent.register_tool(lambda: (change(agent) if armed else None) or "changed", name="change")
    agent.ask("warm up")
    armed.append(True)
    first, second = (c.messages[0]["content"] for c in agent.ask("go").calls)
    assert "limit is 7" in first and "### registered_late" not in first
    assert "limit is 9" in second and "### registered_late" in second


def test_a_changed_section_keeps_full_provenance(nb: Path) -> None:
    role = write(nb / "prompts" / "agent.system.main.role.md", "{{include original}}\nMINE")
    age(nb)
    _, _, agent = two_steps(nb, lambda a: rewrite(role, "{{include original}}\nMINE2"))
    fresh_agent = Agent(nb, model=[answer("ok")])
    fresh_agent.register_tool(lambda: "", name="change")
    fresh = fresh_agent.ask("x").calls[0]
    last = agent.calls[-1]
    pick = lambda call: [(p.label, p.text, p.source, p.files, p.overrode) for p in call.parts if p.kind == "system"]  # noqa: E731
    assert pick(last) == pick(fresh)
    assert any("agent.system.main.role.md (notebook)" in p.files for p in last.parts)


@pytest.mark.parametrize("edit", ["md", "folder"])
def test_a_user_prompt_folder_is_watched_by_the_hierarchy(nb: Path, edit: str) -> None:
    f = write(nb / "prompts" / "sub" / "deep.md", "x")
    age(nb)
    agent = Agent(nb, model=[answer("ok")])
    generation = agent.hierarchy.generation
    agent.refresh()
    assert agent.hierarchy.generation == generation
    rewrite(f, "y") if edit == "md" else write(nb / "prompts" / "sub" / "new.md", "n")
    agent.refresh()
    assert agent.hierarchy.generation == generation + 1


FILES_ONLY_PY = """
from a0nb.ext import VariablesPlugin
RUNS = []

class Vars(VariablesPlugin):
    files_only = True

    def get_variables(self, file, backup_dirs=None, **kwargs):
        RUNS.append(file)
        return {"v": len(RUNS)}
"""


def test_a_files_only_loader_runs_again_only_after_a_file_change(tmp_path: Path) -> None:
    write(tmp_path / "p" / "v.md", "run {{v}}")
    write(tmp_path / "p" / "v.py", FILES_ONLY_PY)
    age(tmp_path)
    standalone = PromptEngine([PromptDir(tmp_path / "p", "p")])
    first, second = (standalone.render("v.md").text for _ in range(2))
    assert first == "run 1" and second != first  # nobody watches the files: it runs on every render
    engine = PromptEngine([PromptDir(tmp_path / "p", "p")])
    engine.trust_listings = True
    assert [engine.render("v.md").text for _ in range(2)] == ["run 1", "run 1"]
    engine.invalidate()  # what the owner does when a file changed
    assert engine.render("v.md").text == "run 2"


def test_subordinate_profiles_follow_a_new_profile(nb: Path) -> None:
    agent = Agent(nb, model=[answer("ok")] * 2)
    assert "`zz_new`" not in agent.ask("x").calls[0].messages[0]["content"]
    write(nb / "agents" / "zz_new" / "agent.yaml", "title: Brand new\ndescription: Added mid-session.\n")
    system = agent.ask("y").calls[0].messages[0]["content"]
    assert "`zz_new`: Brand new — Added mid-session." in system


def test_a_settled_engine_sees_a_new_copy_and_an_edit_after_invalidate(tmp_path: Path) -> None:
    hi, lo = tmp_path / "hi", tmp_path / "lo"
    hi.mkdir()
    write(lo / "a.md", 'low {{x}} {{ include "b.md" }}')
    write(lo / "b.md", "B")
    age(tmp_path)
    engine = PromptEngine([PromptDir(hi, "hi"), PromptDir(lo, "lo")])
    engine.trust_listings = True
    assert [engine.render("a.md", x=i).text for i in (1, 2)] == ["low 1 B", "low 2 B"]  # new kwargs: a new render
    write(hi / "a.md", "high {{x}}")
    rewrite(lo / "b.md", "B2")
    engine.invalidate()  # (the agent's hierarchy watch does this when a user folder changes)
    rendered = engine.render("a.md", x=3)
    assert rendered.text == "high 3" and [s.label for s in rendered.sources] == ["hi"]
    assert rendered.sources[0].overrode == (lo / "a.md",)
    (hi / "a.md").unlink()
    engine.invalidate()
    assert engine.render("a.md", x=4).text == "low 4 B2"


# ---- flat files (text and placeholders only) rendered by substitution ---------------------------------

def test_a_flat_file_renders_as_a_full_render_would_and_sees_edits(tmp_path: Path) -> None:
    flat = write(tmp_path / "p" / "flat.md", "[X]\n{{v}} and {{w}}{{v}}")
    age(tmp_path)
    values = ["one", {"k": [1, "é"]}, 3, True, "```json\n{}\n```", ""]
    fresh = lambda v: PromptEngine([PromptDir(tmp_path / "p", "p")]).render("flat.md", v=v, w=v)  # noqa: E731
    for trusted in (False, True):
        engine = PromptEngine([PromptDir(tmp_path / "p", "p")])
        engine.trust_listings = trusted
        for v in values * 2:  # (the second round: every render by substitution)
            assert engine.render("flat.md", v=v, w=v) == fresh(v)
            assert engine.text("flat.md", None, {"v": v, "w": v}) == fresh(v).text  # (read_prompt's path)
        assert bool(engine._flat._entries) is trusted  # learnt only while the owner watches the folders
        rewrite(flat, "[Y] {{if v}}{{v}}{{endif}} {{w}}")  # edited, and no longer flat
        if trusted:
            assert engine.render("flat.md", v="a", w="b").text == "[X]\na and ba"  # the watch tells, not a stat
            assert engine.text("flat.md", None, {"v": "a", "w": "b"}) == "[X]\na and ba"
            engine.invalidate()
        assert engine.text("flat.md", None, {"v": "a", "w": "b"}) == "[Y] a b"
        assert engine.render("flat.md", v="a", w="b").text == "[Y] a b"
        assert engine.render("flat.md", v="", w="b").text == "[Y]  b"
        rewrite(flat, "[X]\n{{v}} and {{w}}{{v}}")
    write(tmp_path / "p" / "bare.md", "{{v}}")  # a value that makes the whole text a fenced json block
    age(tmp_path)
    engine = PromptEngine([PromptDir(tmp_path / "p", "p")])
    engine.trust_listings = True
    for v in ["```json\n{\"a\": 1}\n```", "  ~~~json\n[]\n~~~", "x"] * 2:
        assert engine.render("bare.md", v=v) == PromptEngine([PromptDir(tmp_path / "p", "p")]).render("bare.md", v=v)
    assert engine.render("bare.md", v="```json\n{}\n```").text == "{}"


def test_a_flat_file_missing_a_value_or_just_written_is_rendered_in_full(tmp_path: Path) -> None:
    write(tmp_path / "p" / "flat.md", "[{{v}}] {{w}}")
    age(tmp_path)
    engine = PromptEngine([PromptDir(tmp_path / "p", "p")])
    engine.trust_listings = True
    for v in "ab":
        assert engine.render("flat.md", v=v).text == f"[{v}] {{{{w}}}}"  # unknown w: left as written, noted
    assert not engine._flat._entries
    write(tmp_path / "p" / "new.md", "{{v}}")
    engine.invalidate()  # (what the owner's watch does)
    assert [engine.render("new.md", v=v).text for v in "ab"] == ["a", "b"] and not engine._flat._entries


def test_the_extras_file_edited_mid_turn_is_seen_at_the_next_step(nb: Path) -> None:
    extras = write(nb / "prompts" / "agent.context.extras.md", "[EXTRAS ONE]\n{{extras}}")
    age(nb)
    agent = Agent(nb, model=[tool_reply("change"), tool_reply("change"), answer("done")] * 2)
    armed: list[bool] = []
    agent.register_tool(lambda: (rewrite(extras, "[EXTRAS TWO]\n{{extras}}") if armed else None) or "ok",
                        name="change")
    agent.ask("warm up")  # learnt: later steps render it by substitution
    assert any(k[0] == "agent.context.extras.md" for k in agent.prompts._flat._entries)
    armed.append(True)
    calls = agent.ask("go").calls
    last = [c.messages[-1]["content"] for c in calls]
    assert "[EXTRAS ONE]" in last[0] and all("[EXTRAS TWO]" in t for t in last[1:])
    part = next(p for p in calls[-1].parts if p.kind == "extras")
    assert part.text in last[-1]


def test_derived_gives_the_same_object_only_for_the_very_same_value(tmp_path: Path) -> None:
    engine = PromptEngine([])
    made: list[object] = []

    def make(value: object) -> str:
        made.append(value)
        return f"<{value}>"

    a, equal_to_a = ["x"], ["x"]
    first = engine.reuse.derived(a, make)
    assert engine.reuse.derived(a, make) is first and made == [a]  # the same value: the same result, not made again
    assert engine.reuse.derived(equal_to_a, make) == first and made == [a, equal_to_a]  # equal is not enough
    assert engine.reuse.derived(a, str) == "['x']"  # another maker: made by it


def test_a_system_section_follows_its_prompt_file_when_reused_whole(nb: Path) -> None:
    """The main section is the same Section object while nothing changed, and a new one after an edit."""
    main = write(nb / "prompts" / "agent.system.main.md", "MAIN ONE {{workdir}}")
    age(nb)
    agent = Agent(nb, model=[tool_reply("change"), tool_reply("change"), tool_reply("change"), answer("done")])
    armed: list[bool] = []
    agent.register_tool(lambda: (rewrite(main, "MAIN TWO {{workdir}}") if armed and armed.pop() else None) or "ok",
                        name="change")  # (edited once, by the first step's tool)
    sections: list[object] = []
    agent.register_extension("chat_model_call_before", lambda: sections.append(agent.loop_data.system[0]), name="s")
    armed.append(True)
    agent.ask("go")
    assert [str(s).split()[:2] for s in sections] == [["MAIN", "ONE"]] + [["MAIN", "TWO"]] * 3
    assert sections[2] is sections[1] and sections[3] is sections[1]  # reused whole (composer: identity)
    assert sections[1] is not sections[0] and sections[1].sources[0].path == main  # type: ignore[attr-defined]
