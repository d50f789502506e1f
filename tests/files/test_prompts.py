"""Tests of the prompt engine: reference §8.3 cases 1–8, conditionals, includes, variables loaders,
provenance, caching and a property test that arbitrary text never breaks rendering."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a0nb.files import templates as templates_module
from a0nb.diagnostics import Diagnostics
from a0nb.errors import PromptError
from a0nb.files.roots import Root
from a0nb.files.prompts import PromptDir, PromptEngine, Rendered, Source, VariablesPlugin, prompt_dirs


@pytest.fixture
def hi(tmp_path: Path) -> Path:
    (tmp_path / "hi").mkdir()
    return tmp_path / "hi"


@pytest.fixture
def lo(tmp_path: Path) -> Path:
    (tmp_path / "lo").mkdir()
    return tmp_path / "lo"


@pytest.fixture
def engine(hi: Path, lo: Path) -> PromptEngine:
    return PromptEngine([PromptDir(hi, "hi"), PromptDir(lo, "lo")])


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def age(*paths: Path, seconds: int = 60) -> None:
    """Make files and folders look untouched for a while, as real prompt folders are."""
    past = time.time() - seconds
    for p in paths:
        for q in [p, *p.rglob("*")] if p.is_dir() else [p]:
            os.utime(q, (past, past))


def messages(engine: PromptEngine, severity: str | None = None) -> list[str]:
    return [d.message for d in engine.diagnostics.of("prompt") if severity in (None, d.severity)]


VARS_PY = """
from a0nb.files.prompts import VariablesPlugin

class Vars(VariablesPlugin):
    def get_variables(self, file, backup_dirs=None, **kwargs):
        return {VALUES}
"""


def vars_py(values: str) -> str:
    return VARS_PY.replace("{VALUES}", values)


# ---- reference §8.3, items 1–8 -------------------------------------------------------------------

def test_ref1_placeholders_and_unknown(engine: PromptEngine, lo: Path) -> None:
    write(lo / "a.md", "Hello {{name}} {{missing}}")
    r = engine.render("a.md", name="X")
    assert r.text == "Hello X {{missing}}"
    assert r.unknown == ("missing",)
    infos = [d for d in engine.diagnostics.of("prompt") if d.severity == "info"]
    assert infos and "missing" in infos[0].message and infos[0].path == str(lo / "a.md") and infos[0].line == 1


def test_ref2_conditional(engine: PromptEngine, lo: Path) -> None:
    write(lo / "c.md", "A{{if flag}}B{{endif}}C")
    assert engine.render("c.md", flag=True).text == "ABC"
    assert engine.render("c.md", flag=False).text == "AC"
    assert engine.render("c.md").text == "A{{if flag}}B{{endif}}C"
    warning = [d for d in engine.diagnostics.of("prompt") if d.severity == "warning"][0]
    assert "flag" in warning.message and warning.path == str(lo / "c.md") and warning.line == 1


def test_ref3_nested_conditionals(engine: PromptEngine, lo: Path) -> None:
    write(lo / "n.md", "{{if a}}1{{if b}}2{{endif}}3{{endif}}")
    assert engine.render("n.md", a=True, b=False).text == "13"
    assert engine.render("n.md", a=True, b=True).text == "123"
    assert engine.render("n.md", a=False, b=True).text == ""


def test_ref4_include_through_hierarchy(engine: PromptEngine, hi: Path, lo: Path) -> None:
    write(lo / "main.md", '[{{ include "part.md" }}]')
    write(lo / "part.md", "P")
    write(hi / "part.md", "Q")
    assert engine.render("main.md").text == "[Q]"
    (lo / "part.md").unlink()
    (hi / "part.md").unlink()
    assert engine.render("main.md").text == '[{{ include "part.md" }}]'
    assert any("part.md" in m and "not found" in m for m in messages(engine, "warning"))


def test_ref5_include_original(engine: PromptEngine, hi: Path, lo: Path) -> None:
    write(hi / "x.md", "{{include original}}+E")
    write(lo / "x.md", "B")
    assert engine.render("x.md").text == "B+E"
    (lo / "x.md").unlink()
    assert engine.render("x.md").text == "+E"


def test_ref6_variables_plugin_and_kwargs_win(engine: PromptEngine, lo: Path) -> None:
    write(lo / "v.md", "{{v}}")
    write(lo / "v.py", vars_py("{'v': '1'}"))
    assert engine.render("v.md").text == "1"
    assert engine.render("v.md", v="2").text == "2"


def test_ref7_json_template_parse(engine: PromptEngine, lo: Path) -> None:
    write(lo / "fw.warning.md", '```json\n{"system_warning": {{message}}}\n```\n')
    message = 'say "hi"\n'
    assert engine.parse("fw.warning.md", message=message) == {"system_warning": message}


def test_ref8_fenced_json_through_text_path(engine: PromptEngine, lo: Path) -> None:
    write(lo / "fw.initial.md", '~~~json\n{"tool_name": "response", "tool_args": {"text": "{{greeting}}"}}\n~~~\n')
    r = engine.render("fw.initial.md", greeting="Hi")
    assert r.text == '{"tool_name": "response", "tool_args": {"text": "Hi"}}'


# ---- conditionals -------------------------------------------------------------------------------

def test_conditional_whitespace_tolerant(engine: PromptEngine, lo: Path) -> None:
    write(lo / "w.md", "a{{  if  x > 1  }}b{{ endif }}c{{if not x}}d{{endif  }}")
    assert engine.render("w.md", x=2).text == "abc"
    assert engine.render("w.md", x=0).text == "acd"


def test_error_leaves_block_and_rest_untouched_but_substitutes(engine: PromptEngine, lo: Path) -> None:
    write(lo / "e.md", "{{if ok}}1{{endif}}\n{{if nope}}2{{endif}}\n{{if ok}}{{v}}{{endif}}")
    r = engine.render("e.md", ok=True, v="V")
    assert r.text == "1\n{{if nope}}2{{endif}}\n{{if ok}}V{{endif}}"
    warning = [d for d in engine.diagnostics.of("prompt") if d.severity == "warning"][0]
    assert "nope" in warning.message and warning.line == 2


def test_error_inside_true_block_stops_rest(engine: PromptEngine, lo: Path) -> None:
    write(lo / "e.md", "{{if a}}x{{if zz}}y{{endif}}z{{endif}}{{if a}}w{{endif}}")
    assert engine.render("e.md", a=True).text == "x{{if zz}}y{{endif}}z{{if a}}w{{endif}}"


def test_unterminated_if(engine: PromptEngine, lo: Path) -> None:
    write(lo / "u.md", "a{{if t}}b{{endif}}\nc{{if t}}d{{if t}}e{{endif}} {{v}}")
    r = engine.render("u.md", t=True, v="V")
    assert r.text == "ab\nc{{if t}}d{{if t}}e{{endif}} V"
    warning = [d for d in engine.diagnostics.of("prompt") if "unterminated" in d.message][0]
    assert warning.line == 2 and warning.path == str(lo / "u.md")


def test_stray_endif_kept_with_diagnostic(engine: PromptEngine, lo: Path) -> None:
    write(lo / "s.md", "a{{endif}}b")
    assert engine.render("s.md").text == "a{{endif}}b"
    assert any("stray" in m for m in messages(engine))


def test_conditions_see_plugin_variables(engine: PromptEngine, lo: Path) -> None:
    write(lo / "p.md", "{{if shown}}yes{{endif}}")
    write(lo / "p.py", vars_py("{'shown': True}"))
    assert engine.render("p.md").text == "yes"
    assert engine.render("p.md", shown=False).text == ""


@pytest.mark.parametrize(
    ("expr", "variables", "expected"),
    [
        ("a and b", {"a": 1, "b": 0}, False),
        ("a or b", {"a": 0, "b": "x"}, True),
        ("not a", {"a": ""}, True),
        ("n >= 2 and n < 5", {"n": 3}, True),
        ("1 < n < 3", {"n": 3}, False),
        ("'py' in tools", {"tools": ["py", "sh"]}, True),
        ("'rb' not in tools", {"tools": ["py"]}, True),
        ("x is None", {"x": None}, True),
        ("n * 2 + 1 == 7 and n / 2 == 1.5 and n // 2 == 1 and n % 2 == 1 and n ** 2 == 9", {"n": 3}, True),
        ("-n == -3 and +n == 3", {"n": 3}, True),
        ("cfg['mode'] == 'fast'", {"cfg": {"mode": "fast"}}, True),
        ("items[-1] == 3", {"items": [1, 2, 3]}, True),
        ("len(items) == 2", {"items": ["a", "b"]}, True),
        ("len(name) > 3", {"name": "ab"}, False),
        ("[1, 2] == xs and (1,) == t and {'a': 1} == d", {"xs": [1, 2], "t": (1,), "d": {"a": 1}}, True),
        ("s + '!' == 'hi!'", {"s": "hi"}, True),
        ("True and not False and None is None", {}, True),
    ],
)
def test_expression_language(engine: PromptEngine, lo: Path, expr: str, variables: dict, expected: bool) -> None:
    write(lo / "x.md", "{{if " + expr + "}}T{{endif}}")
    assert engine.render("x.md", **variables).text == ("T" if expected else "")
    assert not messages(engine, "warning")


@pytest.mark.parametrize(
    "expr",
    [
        "obj.__class__",
        "__import__('os')",
        "open('x')",
        "(lambda: 1)()",
        "[i for i in xs]",
        "xs[0:1]",
        "f'{xs}'",
        "'%s' % xs",
        "2 ** 10 ** 7",
        "'a' * 10 ** 9",
        "xs * 10 ** 9",
        "1 / 0",
        "xs < 1",
        "len(*xs)",
        "{**d}",
        "b'x'",
        "x := 1",
        "1 if xs else 2",
        "~1",
        "1 <<",
    ],
)
def test_disallowed_or_failing_expressions_halt(engine: PromptEngine, lo: Path, expr: str) -> None:
    text = "{{if " + expr + "}}T{{endif}}"
    write(lo / "x.md", text)
    assert engine.render("x.md", xs=[1], d={}, obj=object()).text == text
    assert any("cannot evaluate" in m for m in messages(engine, "warning"))


def test_condition_value_whose_truth_raises(engine: PromptEngine, lo: Path) -> None:
    class Bad:
        def __bool__(self) -> bool:
            raise RuntimeError("no truth")

    write(lo / "x.md", "{{if v}}T{{endif}}")
    assert engine.render("x.md", v=Bad()).text == "{{if v}}T{{endif}}"
    assert any("no truth" in m for m in messages(engine))


# ---- values are literal (ARCHITECTURE §9) -------------------------------------------------------

def test_values_are_inserted_literally(engine: PromptEngine, lo: Path) -> None:
    write(lo / "part.md", "PART")
    write(lo / "m.md", "<{{body}}>")
    body = '{{ include "part.md" }} {{include original}} {{if 1}}x{{endif}} {{other}}'
    r = engine.render("m.md", body=body, other="O")
    assert r.text == f"<{body}>"
    assert r.unknown == ()
    assert [s.name for s in r.sources] == ["m.md"]


def test_value_formats(engine: PromptEngine, lo: Path) -> None:
    write(lo / "f.md", "{{d}}|{{l}}|{{n}}|{{b}}|{{none}}")
    r = engine.render("f.md", d={"k": "é"}, l=[1, "a"], n=3, b=True, none=None)
    assert r.text == '{"k": "é"}|[1, "a"]|3|True|None'


def test_kwarg_called_name_text_and_agent(engine: PromptEngine, lo: Path) -> None:
    write(lo / "a.md", "{{name}}/{{text}}")
    assert engine.render("a.md", name="N", text="T").text == "N/T"
    assert engine.render_text("{{name}}", name="N").text == "N"
    write(lo / "j.md", "```json\n{\"n\": {{name}}}\n```")
    assert engine.parse("j.md", name="N") == {"n": "N"}


# ---- includes -----------------------------------------------------------------------------------

def test_include_single_quotes_and_kwargs_passed_plugin_vars_not(engine: PromptEngine, lo: Path) -> None:
    write(lo / "main.md", "{{p}}:{{ include 'part.md' }}")
    write(lo / "main.py", vars_py("{'p': 'parent'}"))
    write(lo / "part.md", "{{k}}-{{p}}")
    r = engine.render("main.md", k="K")
    assert r.text == "parent:K-{{p}}"
    assert r.unknown == ("p",)


def test_include_refuses_absolute_and_parent_paths(engine: PromptEngine, tmp_path: Path, lo: Path) -> None:
    secret = write(tmp_path / "secret.md", "S")
    text = f'{{{{ include "{secret}" }}}}|{{{{ include "../secret.md" }}}}'
    write(lo / "m.md", text)
    assert engine.render("m.md").text == text
    assert sum("refused" in m for m in messages(engine, "warning")) == 2


def test_include_name_may_use_a_placeholder(engine: PromptEngine, lo: Path) -> None:
    write(lo / "m.md", '{{ include "tool.{{tool}}.md" }}')
    write(lo / "tool.shell.md", "SHELL")
    assert engine.render("m.md", tool="shell").text == "SHELL"


def test_include_in_subfolder(engine: PromptEngine, lo: Path, hi: Path) -> None:
    write(lo / "m.md", '{{ include "parts/a.md" }}')
    write(lo / "parts" / "a.md", "low")
    assert engine.render("m.md").text == "low"
    write(hi / "parts" / "a.md", "high")
    assert engine.render("m.md").text == "high"


def test_include_original_chains_through_three_roots(tmp_path: Path) -> None:
    dirs = [PromptDir(tmp_path / n, n) for n in ("project", "notebook", "bundled")]
    write(dirs[0].path / "x.md", "P({{include original}})")
    write(dirs[1].path / "x.md", "N({{ include original }})")
    write(dirs[2].path / "x.md", "B{{v}}")
    r = PromptEngine(dirs).render("x.md", v="!")
    assert r.text == "P(N(B!))"
    assert [(s.label, s.via) for s in r.sources] == [("project", "direct"), ("notebook", "original"), ("bundled", "original")]
    assert r.sources[0].overrode == (dirs[1].path / "x.md", dirs[2].path / "x.md")
    assert r.sources[1].overrode == (dirs[2].path / "x.md",)
    assert r.sources[2].overrode == ()


def test_included_file_can_extend_its_original(engine: PromptEngine, hi: Path, lo: Path) -> None:
    write(lo / "main.md", '[{{ include "part.md" }}]')
    write(lo / "part.md", "base")
    write(hi / "part.md", "{{include original}}+more")
    assert engine.render("main.md").text == "[base+more]"


def test_include_cycle_raises_with_chain(engine: PromptEngine, hi: Path, lo: Path) -> None:
    write(hi / "a.md", '{{ include "b.md" }}')
    write(lo / "b.md", '{{ include "a.md" }}')
    with pytest.raises(PromptError) as info:
        engine.render("a.md")
    message = str(info.value)
    assert "a.md → b.md → a.md" in message
    assert str(hi / "a.md") in message and str(lo / "b.md") in message


def test_self_include_is_a_cycle(engine: PromptEngine, hi: Path, lo: Path) -> None:
    write(lo / "s.md", 'x{{ include "s.md" }}')
    with pytest.raises(PromptError, match="s.md → s.md"):
        engine.render("s.md")
    write(hi / "s.md", "{{include original}}")
    with pytest.raises(PromptError):
        engine.render("s.md")  # hi → lo (original), then lo includes s.md from the top: hi again


def test_include_in_false_block_is_not_read(engine: PromptEngine, lo: Path) -> None:
    write(lo / "m.md", '{{if on}}{{ include "p.md" }}{{endif}}')
    write(lo / "p.md", "P")
    r = engine.render("m.md", on=False)
    assert r.text == "" and [s.name for s in r.sources] == ["m.md"]


# ---- variables loaders --------------------------------------------------------------------------

def test_loader_beside_file_first_then_priority_order(engine: PromptEngine, hi: Path, lo: Path) -> None:
    write(lo / "v.md", "{{v}}")
    write(hi / "v.py", vars_py("{'v': 'from hi'}"))
    assert engine.render("v.md").text == "from hi"
    write(lo / "v.py", vars_py("{'v': 'beside'}"))
    r = engine.render("v.md")
    assert r.text == "beside"
    py = [s for s in r.sources if s.via == "variables"][0]
    assert py == Source("v.py", lo / "v.py", "lo", "variables", ())


def test_loader_receives_file_backup_dirs_agent_and_kwargs(engine: PromptEngine, hi: Path, lo: Path) -> None:
    write(lo / "v.md", "{{got}}")
    write(lo / "v.py", vars_py(
        "{'got': '|'.join([file, ','.join(backup_dirs), str(kwargs['_agent']), str(kwargs.get('k'))])}"))
    r = engine.render("v.md", agent="AGENT", k="K")
    assert r.text == f"{lo / 'v.md'}|{hi},{lo}|AGENT|K"


def test_loader_accepts_dataclasses_and_leaves_sys_modules_clean(engine: PromptEngine, lo: Path) -> None:
    write(lo / "v.md", "{{v}}")
    write(lo / "v.py", """
from dataclasses import dataclass
from a0nb.files.prompts import VariablesPlugin

@dataclass
class Box:
    v: str

class First(VariablesPlugin):
    def get_variables(self, file, backup_dirs=None, **kwargs):
        return {"v": Box("boxed").v}

class Second(First):
    def get_variables(self, file, backup_dirs=None, **kwargs):
        return {"v": "second"}
""")
    before = set(sys.modules)
    assert engine.render("v.md").text == "boxed"
    assert set(sys.modules) - before == set()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("raise RuntimeError('boom at import')", "boom at import"),
        ("def broken(:\n    pass", "SyntaxError"),
        ("X = 1", "no VariablesPlugin"),
        (vars_py("1 / 0"), "ZeroDivisionError"),
        (vars_py("['not', 'a', 'dict']"), "not a dict"),
    ],
)
def test_failing_loader_is_a_diagnostic(engine: PromptEngine, lo: Path, source: str, expected: str) -> None:
    write(lo / "v.md", "v={{v}} k={{k}}")
    write(lo / "v.py", source)
    assert engine.render("v.md", k="K").text == "v={{v}} k=K"
    errors = [d for d in engine.diagnostics.of("prompt") if d.severity == "error"]
    assert errors and expected in errors[0].message and errors[0].path == str(lo / "v.py")


def test_loader_reimported_when_edited(engine: PromptEngine, lo: Path) -> None:
    write(lo / "v.md", "{{v}}")
    write(lo / "v.py", vars_py("{'v': 'one'}"))
    assert engine.render("v.md").text == "one"
    write(lo / "v.py", vars_py("{'v': 'two'}"))
    assert engine.render("v.md").text == "two"


def test_loader_class_cached_when_unchanged(engine: PromptEngine, lo: Path) -> None:
    write(lo / "v.md", "{{v}}")
    write(lo / "v.py", vars_py("{'v': 'x'}"))
    age(lo)
    engine.render("v.md")
    (cls_before,) = [hit[1] for hit in engine._loaders._classes.values()]
    engine.render("v.md")
    (cls_after,) = [hit[1] for hit in engine._loaders._classes.values()]
    assert cls_before is cls_after


def test_reexport_from_package_works_in_loader_files(engine: PromptEngine, lo: Path) -> None:
    write(lo / "v.md", "{{v}}")
    write(lo / "v.py", vars_py("{'v': 'pkg'}").replace("from a0nb.files.prompts import", "from a0nb import"))
    assert engine.render("v.md").text == "pkg"


# ---- parse --------------------------------------------------------------------------------------

def test_parse_encodes_structures_and_keeps_text_templates(engine: PromptEngine, lo: Path) -> None:
    write(lo / "j.md", '~~~json\n{"a": {{a}}, "b": {{b}}, "n": {{n}}}\n~~~')
    assert engine.parse("j.md", a={"x": [1, None]}, b="q\"\\", n=2) == {"a": {"x": [1, None]}, "b": "q\"\\", "n": 2}
    write(lo / "t.md", "Hello {{name}}{{if loud}}!{{endif}}")
    assert engine.parse("t.md", name="N", loud=True) == "Hello N!"


def test_parse_missing_variable_names_file_and_variable(engine: PromptEngine, lo: Path) -> None:
    write(lo / "j.md", '```json\n{"system_warning": {{message}}}\n```')
    with pytest.raises(PromptError) as info:
        engine.parse("j.md")
    assert "message" in str(info.value) and str(lo / "j.md") in str(info.value)


def test_parse_invalid_json_after_substitution(engine: PromptEngine, lo: Path) -> None:
    write(lo / "j.md", '```json\n{"text": "Hello {{name}}"}\n```')
    with pytest.raises(PromptError, match="not valid JSON"):
        engine.parse("j.md", name="N")


def test_parse_json_uses_plugin_variables(engine: PromptEngine, lo: Path) -> None:
    write(lo / "j.md", '```json\n{"v": {{v}}}\n```')
    write(lo / "j.py", vars_py("{'v': [1, 2]}"))
    assert engine.parse("j.md") == {"v": [1, 2]}


def test_only_a_single_fenced_block_is_stripped(engine: PromptEngine, lo: Path) -> None:
    two = '```json\n{"a": 1}\n```\ntext\n```json\n{"b": 2}\n```'
    write(lo / "two.md", two)
    assert engine.render("two.md").text == two
    prose = 'Use the tool:\n~~~json\n{"a": 1}\n~~~'
    write(lo / "prose.md", prose)
    assert engine.render("prose.md").text == prose


# ---- lookup, provenance, errors -----------------------------------------------------------------

def test_missing_file_names_file_and_dirs(engine: PromptEngine, hi: Path, lo: Path) -> None:
    with pytest.raises(PromptError) as info:
        engine.render("nothing.md")
    assert "nothing.md" in str(info.value) and str(hi) in str(info.value) and str(lo) in str(info.value)


@pytest.mark.parametrize("name", ["", "/etc/passwd", "../x.md", "a\x00.md"])
def test_invalid_names(engine: PromptEngine, name: str) -> None:
    with pytest.raises(PromptError):
        engine.render(name)
    assert engine.find(name) is None


def test_non_utf8_file_is_replaced_and_reported(engine: PromptEngine, lo: Path) -> None:
    (lo / "b.md").write_bytes(b"caf\xe9 {{x}}")
    assert engine.render("b.md", x=1).text == "caf\ufffd 1"
    warning = [d for d in engine.diagnostics.of("prompt") if "UTF-8" in d.message][0]
    assert warning.path == str(lo / "b.md")


def test_find_find_all_names(engine: PromptEngine, hi: Path, lo: Path) -> None:
    write(lo / "agent.system.tool.a.md", "la")
    write(lo / "agent.system.tool.b.md", "lb")
    write(hi / "agent.system.tool.b.md", "hb")
    write(hi / "agent.system.tool.c.py", "")
    write(lo / "other.md", "")
    assert engine.find("agent.system.tool.b.md") == PromptDir(hi, "hi")
    assert engine.find_all("agent.system.tool.b.md") == [PromptDir(hi, "hi"), PromptDir(lo, "lo")]
    assert engine.find("nope.md") is None
    assert engine.names("agent.system.tool.*.md") == [
        ("agent.system.tool.a.md", PromptDir(lo, "lo")),
        ("agent.system.tool.b.md", PromptDir(hi, "hi")),
    ]


def test_sources_list_every_file_once_in_order(engine: PromptEngine, hi: Path, lo: Path) -> None:
    write(lo / "main.md", '{{ include "p.md" }}{{ include "p.md" }}{{ include "q.md" }}')
    write(lo / "p.md", "p")
    write(hi / "p.md", "P")
    write(lo / "q.md", "{{q}}")
    write(lo / "q.py", vars_py("{'q': 'Q'}"))
    r = engine.render("main.md")
    assert r.text == "PPQ"
    assert [(s.name, s.label, s.via, s.overrode) for s in r.sources] == [
        ("main.md", "lo", "direct", ()),
        ("p.md", "hi", "include", (lo / "p.md",)),
        ("q.md", "lo", "include", ()),
        ("q.py", "lo", "variables", ()),
    ]


def test_unknown_collected_across_includes(engine: PromptEngine, lo: Path) -> None:
    write(lo / "m.md", '{{a}}{{ include "p.md" }}{{a}}')
    write(lo / "p.md", "{{b}}")
    assert engine.render("m.md").unknown == ("a", "b")


def test_render_text_behaves_as_top_file(engine: PromptEngine, lo: Path) -> None:
    write(lo / "p.md", "P{{v}}")
    r = engine.render_text('<{{ include "p.md" }}>{{include original}}', v=1)
    assert r.text == "<P1>{{include original}}"
    assert [(s.name, s.via) for s in r.sources] == [("p.md", "include")]
    assert any("render_text" in m for m in messages(engine, "warning"))
    assert engine.render_text("```json\n{}\n```").text == "{}"
    assert isinstance(r, Rendered) and str(r) == r.text


def test_shared_diagnostics_object(hi: Path) -> None:
    diags = Diagnostics()
    engine = PromptEngine([PromptDir(hi, "hi")], diags)
    write(hi / "a.md", "{{x}}")
    engine.render("a.md")
    assert engine.diagnostics is diags and len(diags.of("prompt")) == 1


def test_set_dirs_switches_hierarchy(engine: PromptEngine, hi: Path, lo: Path, tmp_path: Path) -> None:
    write(lo / "a.md", "lo")
    write(tmp_path / "profile" / "a.md", "profile")
    assert engine.render("a.md").text == "lo"
    engine.set_dirs([PromptDir(tmp_path / "profile", "profile"), PromptDir(hi, "hi"), PromptDir(lo, "lo")])
    assert engine.render("a.md").text == "profile"


def test_missing_folders_are_skipped(tmp_path: Path, lo: Path) -> None:
    write(lo / "a.md", "A")
    engine = PromptEngine([PromptDir(tmp_path / "absent", "absent"), PromptDir(lo, "lo")])
    assert engine.render("a.md").text == "A"


def test_prompt_dirs_from_roots(tmp_path: Path) -> None:
    roots = [Root("notebook", tmp_path), Root("plugin", tmp_path / "p", "demo")]
    assert prompt_dirs(roots) == [PromptDir(tmp_path / "prompts", "notebook"),
                                  PromptDir(tmp_path / "p" / "prompts", "plugin demo")]


# ---- caching ------------------------------------------------------------------------------------

def test_same_size_edit_seen_immediately(engine: PromptEngine, lo: Path) -> None:
    write(lo / "a.md", "one")
    assert engine.render("a.md").text == "one"
    write(lo / "a.md", "two")  # same size, likely the same timestamp tick
    assert engine.render("a.md").text == "two"


def test_added_higher_copy_seen_immediately(engine: PromptEngine, hi: Path, lo: Path) -> None:
    write(lo / "a.md", "low")
    assert engine.render("a.md").text == "low"
    write(hi / "a.md", "high")
    assert engine.render("a.md").text == "high"
    (hi / "a.md").unlink()
    assert engine.render("a.md").text == "low"


def test_edit_of_aged_file_seen(engine: PromptEngine, lo: Path) -> None:
    write(lo / "a.md", "old text")
    age(lo)
    assert engine.render("a.md").text == "old text"
    write(lo / "a.md", "new")
    assert engine.render("a.md").text == "new"


def test_warm_render_parses_nothing(engine: PromptEngine, hi: Path, lo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(lo / "main.md", '{{if a}}{{ include "p.md" }}{{endif}}{{v}}')
    write(hi / "p.md", "{{include original}}+")
    write(lo / "p.md", "P")
    write(lo / "main.py", vars_py("{'a': True}"))
    age(hi, lo)
    assert engine.render("main.md", v=1).text == "P+1"
    calls: list[str] = []
    real_parse, real_scandir = templates_module._parse, os.scandir
    monkeypatch.setattr(templates_module, "_parse", lambda *a: calls.append("parse") or real_parse(*a))
    monkeypatch.setattr(os, "scandir", lambda *a: calls.append("scandir") or real_scandir(*a))
    monkeypatch.setattr(importlib.util, "spec_from_file_location", lambda *a: calls.append("import"))
    assert engine.render("main.md", v=2).text == "P+2"
    assert calls == []


COUNTING_PY = """
from a0nb.files.prompts import VariablesPlugin
CALLS = []

class Vars(VariablesPlugin):
    def get_variables(self, file, backup_dirs=None, **kwargs):
        agent = kwargs["_agent"]
        CALLS.append(file)
        return {"who": agent["who"]}
"""


def test_render_with_a_loader_is_reused_while_the_loader_returns_the_same(engine: PromptEngine, lo: Path) -> None:
    write(lo / "w.md", 'hello {{who}}{{ include "inc.md" }}')
    write(lo / "inc.md", "{{if who == 'b'}}!{{endif}}")
    write(lo / "w.py", COUNTING_PY)
    write(lo / "inc.py", COUNTING_PY)  # the included file has its own loader
    age(lo)
    state = {"who": "a"}
    first = engine.render("w.md", agent=state)
    assert first.text == "hello a" and any(s.via == "variables" for s in first.sources)
    again = engine.render("w.md", agent=state)
    assert again is first  # the loader ran again, returned the same: the render stands
    state["who"] = "b"  # what the loader reads changed: rendered anew, the include's condition too
    changed = engine.render("w.md", agent=state)
    assert changed.text == "hello b!" and changed.sources == first.sources
    assert engine.render("w.md", agent={"who": "a"}).text == "hello a"


def test_a_loader_edit_is_seen_by_a_cached_render(engine: PromptEngine, lo: Path) -> None:
    write(lo / "v.md", "{{v}}")
    write(lo / "v.py", vars_py("{'v': 'one'}"))
    age(lo)
    assert engine.render("v.md").text == "one"
    write(lo / "v.py", vars_py("{'v': 'two!'}"))
    assert engine.render("v.md").text == "two!"


# ---- property: arbitrary text never breaks the engine -------------------------------------------

PIECES = st.sampled_from([
    "{{", "}}", "{", "}", "if", "if ", " endif", "endif", "include", "original", '"', "'", "a.md", "b.md",
    "x", "y", "name", "c.md", " ", "\n", "(", ")", "==", "not", "and", "len(", "[", "]", "/", "..", "é", "\x00", "0", "**",
])


@pytest.fixture(scope="module")
def fuzz_engine(tmp_path_factory: pytest.TempPathFactory) -> PromptEngine:
    base = tmp_path_factory.mktemp("fuzz")
    write(base / "hi" / "a.md", "A{{x}}{{include original}}")
    write(base / "lo" / "a.md", '{{if y}}low{{endif}}{{ include "b.md" }}')
    write(base / "lo" / "b.md", "B")
    write(base / "lo" / "c.md", '{{ include "c.md" }}')
    return PromptEngine([PromptDir(base / "hi", "hi"), PromptDir(base / "lo", "lo")])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(PIECES, max_size=40), x=st.one_of(st.none(), st.integers(), st.text(max_size=5)))
def test_arbitrary_text_only_raises_prompt_error(fuzz_engine: PromptEngine, parts: list[str], x: object) -> None:
    text = "".join(parts)
    for run in (lambda: fuzz_engine.render_text(text, x=x, y=x, name="N"),
                lambda: fuzz_engine.render_text(text)):
        try:
            r = run()
        except PromptError:
            continue
        assert isinstance(r.text, str)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=60))
def test_arbitrary_unicode_only_raises_prompt_error(text: str) -> None:
    engine = PromptEngine([])
    try:
        engine.render_text(text, x=1)
        engine.render_text("{{if " + text + "}}T{{endif}}", x=1)
    except PromptError:
        pass


def test_json_value_round_trip_property_examples(engine: PromptEngine, lo: Path) -> None:
    write(lo / "j.md", "```json\n{\"v\": {{v}}}\n```")
    for value in ["", "\\", "\"", "}}", "{{v}}", "line\nbreak", "\u2028", ["x", {"y": None}], 1.5, True]:
        assert engine.parse("j.md", v=value) == {"v": json.loads(json.dumps(value))}
