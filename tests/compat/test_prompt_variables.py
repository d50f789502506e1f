"""An Agent Zero file that renders one of a0nb's bundled prompts must fill it: every placeholder of a0nb's copy of
`agent.extras.agent_info.md`, `agent.system.secrets.md`, ... is a keyword the corpus's own call passes (upstream's
`_70_include_agent_info` passes `llm`, `_13_secrets_prompt` passes `vars`). Found in the corpus files' source
(their `read_prompt("name", key=...)` calls), never in a0nb's re-creation of them; and then shown end to end for
the two files whose names differed."""
from __future__ import annotations

import ast
import re
import shutil
import sys
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.testing import answer

sys.path.insert(0, str(Path(__file__).parent))
from corpus_judge import find_corpus  # noqa: E402

CORPUS = find_corpus()
pytestmark = pytest.mark.skipif(CORPUS is None, reason="the upstream corpus (shared/a0-upstream) is not here")
BUNDLED = Path(__file__).resolve().parents[2] / "prompts"
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
_KEYWORDS = {"if", "endif", "else", "elif", "include"}


def _calls() -> list[tuple[str, str, set[str]]]:
    """(corpus file, prompt name, keywords passed) for each `read_prompt`/`parse_prompt` call with a literal name
    and no `**kwargs` in the corpus's Python files."""
    found = []
    for path in sorted(CORPUS.rglob("*.py")):  # type: ignore[union-attr]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("read_prompt", "parse_prompt") and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                continue
            if any(k.arg is None for k in node.keywords):
                continue
            found.append((str(path.relative_to(CORPUS)), node.args[0].value, {k.arg for k in node.keywords if k.arg}))
    return found


def test_the_corpus_calls_are_found() -> None:
    names = {name for _, name, _ in _calls()}
    assert {"agent.extras.agent_info.md", "agent.system.secrets.md", "agent.system.datetime.md"} <= names


@pytest.mark.parametrize("source,name,passed", [c for c in (_calls() if CORPUS else []) if (BUNDLED / c[1]).is_file()],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_bundled_prompt_uses_only_what_the_upstream_call_passes(source: str, name: str, passed: set[str]) -> None:
    text = (BUNDLED / name).read_text(encoding="utf-8")
    used = {m for m in _PLACEHOLDER.findall(text) if m not in _KEYWORDS}
    used |= {m for m in re.findall(r"\{\{\s*if\s+([A-Za-z_]\w*)", text)}
    assert used <= passed, f"{name}: {sorted(used - passed)} are not passed by {source} (it passes {sorted(passed)})"


def _place(nb: Path, corpus_path: str, point: str) -> None:
    target = nb / "extensions" / point / Path(corpus_path).name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(CORPUS / corpus_path, target)  # type: ignore[operator]


def test_upstream_agent_info_fills_a0nbs_prompt(nb: Path) -> None:
    _place(nb, "extensions/python/message_loop_prompts_after/_70_include_agent_info.py", "message_loop_prompts_after")
    agent = Agent(nb, model=[answer("done")])
    agent.ask("go")
    extras = str(agent.calls[0].messages[-1]["content"])
    assert "agent number 0" in extras and "{{" not in extras
    assert not [d for d in agent.diagnostics if "no variable named" in d.message]


def test_upstream_secrets_prompt_fills_a0nbs_prompt(nb: Path) -> None:
    _place(nb, "extensions/python/system_prompt/_13_secrets_prompt.py", "system_prompt")
    (nb / ".a0proj").mkdir()
    (nb / ".a0proj" / "secrets.env").write_text("API_TOKEN=sk-compat-test-1234567\n")
    agent = Agent(nb, model=[answer("done")])
    agent.ask("go")
    system = str(agent.calls[0].messages[0]["content"])
    assert "§§secret(API_TOKEN)" in system and "{{vars}}" not in system and "{{variables}}" not in system
    assert not [d for d in agent.diagnostics if "no variable named" in d.message]


def test_sections_from_upstream_extensions_name_their_prompt_files(nb: Path) -> None:
    """What the inspector shows for each part: the files too, not only the extension, for upstream's own
    system-prompt extensions (`_10_main_prompt` appends what `read_prompt` returned; `_14_project_prompt` joins two
    reads with `+`)."""
    _place(nb, "extensions/python/system_prompt/_10_main_prompt.py", "system_prompt")
    _place(nb, "extensions/python/system_prompt/_14_project_prompt.py", "system_prompt")
    agent = Agent(nb, model=[answer("done")])
    agent.ask("go")
    parts = {p.extension: p for p in agent.calls[0].parts if p.kind == "system"}
    main, project = parts["_10_main_prompt"], parts["_14_project_prompt"]
    assert main.files[0] == "agent.system.main.md (bundled)" and "agent.system.main.role.md (bundled)" in main.files
    assert [f.split(" ")[0] for f in project.files] == ["agent.system.projects.main.md",
                                                        "agent.system.projects.inactive.md"]
    assert "_10_main_prompt.py" in main.source and "agent.system.main.md" in main.source


def test_upstream_workdir_extras_show_the_tree_a0nbs_would(nb: Path) -> None:
    """Upstream's `_75_include_workdir_extras.py` replaces a0nb's file of the same name; without a project it reads
    `workdir_show` and the limits from `helpers.settings`, which a0nb fills from the notebook's own file-structure
    settings (a0nb shows the tree by default), so the tree is still there; switched off in `.a0proj`, it is gone."""
    _place(nb, "extensions/python/message_loop_prompts_after/_75_include_workdir_extras.py", "message_loop_prompts_after")
    (nb / "data.csv").write_text("a,b\n1,2\n")
    agent = Agent(nb, model=[answer("done"), answer("again")])
    agent.ask("go")
    extras = str(agent.calls[0].messages[-1]["content"])
    assert "project_file_structure" in extras and "data.csv" in extras
    assert any(p.label == "extras: project_file_structure" and "_75_include_workdir_extras.py" in p.source
               for p in agent.calls[0].parts)
    (nb / ".a0proj").mkdir()
    (nb / ".a0proj" / "project.json").write_text('{"file_structure": {"enabled": false}}')
    agent.ask("again")
    assert "project_file_structure" not in str(agent.calls[1].messages[-1]["content"])


def test_upstream_workdir_extras_in_a_project_use_its_ignore_patterns(nb: Path) -> None:
    """With `.a0proj`, upstream's `_75` reads the project's `file_structure` (its `gitignore` as one text, which it
    splits into lines) and the tree from `projects.get_file_structure`."""
    _place(nb, "extensions/python/message_loop_prompts_after/_75_include_workdir_extras.py", "message_loop_prompts_after")
    (nb / ".a0proj").mkdir()
    (nb / ".a0proj" / "project.json").write_text('{"title": "qa", "file_structure": {"gitignore": "*.log\\n"}}')
    (nb / "data.csv").write_text("a,b\n")
    (nb / "noise.log").write_text("x\n")
    agent = Agent(nb, model=[answer("done")])
    assert agent.ask("go").ok
    extras = str(agent.calls[0].messages[-1]["content"])
    assert "data.csv" in extras and "noise.log" not in extras and "*.log" in extras
    assert not [d for d in agent.diagnostics if d.area == "extension"]


def test_upstream_project_prompt_sees_the_notebooks_project_as_active(nb: Path) -> None:
    """Upstream's `_14_project_prompt` reads the chat's active project from its context data ("project"); in a0nb the
    notebook folder with `.a0proj/` is the active project, so the section is the active one, with its instructions."""
    _place(nb, "extensions/python/system_prompt/_14_project_prompt.py", "system_prompt")
    agent = Agent(nb, model=[answer("done"), answer("again")])
    agent.ask("go")
    (section,) = [p for p in agent.calls[0].parts if p.extension == "_14_project_prompt"]
    assert "agent.system.projects.inactive.md (bundled)" in section.files
    (nb / ".a0proj").mkdir()
    (nb / ".a0proj" / "project.json").write_text('{"title": "Budget review", "instructions": "Cite every file."}')
    agent.ask("again")
    (section,) = [p for p in agent.calls[1].parts if p.extension == "_14_project_prompt"]
    assert "Budget review" in section.text and "Cite every file." in section.text and "{{" not in section.text
    assert any(f.startswith("agent.system.projects.active.md") for f in section.files)
    assert not [d for d in agent.diagnostics if "agent.system.projects.active.md" in str(d.path)]
