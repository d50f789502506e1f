"""Structural checks of the bundled prompt files (prompts/) and profiles (agents/).

They verify shapes the engine relies on (JSON templates, tool examples, variable names) without rendering.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
PROMPTS = REPO / "prompts"
AGENTS = REPO / "agents"

# file name -> the exact set of variables its placeholders may use (and must all use)
VARIABLES: dict[str, set[str]] = {
    "agent.system.main.md": set(),
    "agent.system.main.role.md": set(),
    "agent.system.main.specifics.md": set(),
    "agent.system.main.environment.md": {"workdir"},
    "agent.system.main.communication.md": set(),
    "agent.system.main.solving.md": set(),
    "agent.system.main.tips.md": set(),
    "agent.system.tools.md": {"tools"},
    "agent.system.tool.response.md": set(),
    "agent.system.tool.code_execution.md": set(),
    "agent.system.tool.skills.md": set(),
    "agent.system.tool.call_subordinate.md": {"profiles"},
    "agent.system.secrets.md": {"secrets", "vars"},
    "agent.system.skills.md": set(),
    "agent.system.projects.active.md": {
        "project_path",
        "project_name",
        "project_description",
        "project_instructions",
        "knowledge_files",
    },
    "agent.context.extras.md": {"extras"},
    "agent.system.datetime.md": {"date_time"},
    "agent.system.skills.relevant.md": {"skills"},
    "agent.system.skills.reattached.md": {"name", "content"},
    "agent.system.skills.loaded.md": {"name", "content"},
    "agent.extras.agent_info.md": {"number", "profile", "llm", "preset"},
    "agent.extras.workdir_structure.md": {"folder", "max_depth", "gitignore", "file_structure"},
    "agent.extras.parallel_jobs.md": {"jobs"},
    "fw.user_message.md": {"system_message", "message", "attachments"},
    "fw.intervention.md": {"system_message", "message", "attachments"},
    "fw.warning.md": {"message"},
    "fw.ai_response.md": {"message"},
    "fw.tool_result.md": {"tool_name", "tool_result"},
    "fw.msg_misformat.md": {"reason"},
    "fw.msg_repeat.md": set(),
    "fw.msg_critical_error.md": {"error_message"},
    "fw.msg_summary.md": {"summary"},
    "fw.msg_truncated.md": {"length"},
    "fw.topic_summary.sys.md": set(),
    "fw.topic_summary.msg.md": {"content"},
    "fw.tool_not_found.md": {"tool_name", "tools_prompt"},
    "fw.initial_message.md": set(),
    "fw.code.timeout.md": {"timeout"},
    "fw.code.denied.md": {"runtime", "policy"},
    "fw.code.truncated.md": {"length"},
    "fw.msg_max_iterations.md": {"limit"},
    "fw.msg_interrupted.md": set(),
}
PROMPT_FILES = sorted(VARIABLES)

# file name -> the keys of the dict it becomes
JSON_TEMPLATES: dict[str, set[str]] = {
    "fw.user_message.md": {"system_message", "user_message", "attachments"},
    "fw.intervention.md": {"system_message", "user_intervention", "attachments"},
    "fw.warning.md": {"system_warning"},
    "fw.tool_result.md": {"tool_name", "tool_result"},
    "fw.msg_summary.md": {"messages_summary"},
    "fw.initial_message.md": {"thoughts", "headline", "tool_name", "tool_args"},
}

# tool prompt file -> (tool name, argument names the file must document)
TOOL_FILES: dict[str, tuple[str, set[str]]] = {
    "agent.system.tool.response.md": ("response", {"text"}),
    "agent.system.tool.code_execution.md": ("code_execution", {"runtime", "code"}),
    "agent.system.tool.skills.md": ("skills_tool", {"query", "skill_name", "file_path"}),
    "agent.system.tool.call_subordinate.md": ("call_subordinate", {"message", "profile", "reset"}),
}

MAIN_PARTS = [
    "agent.system.main.role.md",
    "agent.system.main.specifics.md",
    "agent.system.main.environment.md",
    "agent.system.main.communication.md",
    "agent.system.main.solving.md",
    "agent.system.main.tips.md",
]

DEFAULT_SYSTEM_PROMPT = [
    "agent.system.main.md",
    *MAIN_PARTS,
    "agent.system.tools.md",
    *TOOL_FILES,
    "agent.system.skills.md",
]
WORD_BUDGET = 1800

PROFILES = ["default", "developer", "researcher", "_example"]
PROFILE_FILES = [
    "default/agent.yaml",
    "developer/agent.yaml",
    "developer/prompts/agent.system.main.specifics.md",
    "researcher/agent.yaml",
    "researcher/prompts/agent.system.main.specifics.md",
    "_example/agent.yaml",
    "_example/README.md",
    "_example/prompts/agent.system.main.role.md",
    "_example/prompts/agent.system.main.specifics.md",
    "_example/tools/response.py",
    "_example/extensions/message_loop_prompts_after/_80_example_note.py",
]

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
DIRECTIVE = re.compile(r"\{\{\s*(if\b[^}]*|endif|include\b[^}]*)\}\}")
INCLUDE = re.compile(r"\{\{\s*include\s+[\"']([^\"']+)[\"']\s*\}\}")
CONDITION = re.compile(r"\{\{\s*if\s+([^}]*)\}\}")
JSON_BLOCK = re.compile(r"\A```json\n(.*)\n```\Z", re.DOTALL)
TILDE_BLOCK = re.compile(r"^~~~json\n(.*?)\n~~~$", re.DOTALL | re.MULTILINE)


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def prompt(name: str) -> str:
    return read(PROMPTS / name)


def placeholders(text: str) -> set[str]:
    return {m.group(1) for m in PLACEHOLDER.finditer(text) if m.group(1) not in {"endif"}}


def condition_names(text: str) -> set[str]:
    return {name for expr in CONDITION.findall(text) for name in re.findall(r"[A-Za-z_]\w*", expr)}


def load_json_template(text: str) -> Any:
    """Mimic the engine closely enough: each placeholder becomes a JSON string of its own name."""
    match = JSON_BLOCK.match(text.strip())
    assert match, "not a single ```json block"
    body = match.group(1)
    assert "```" not in body, "more than one fenced block"
    return json.loads(PLACEHOLDER.sub(lambda m: json.dumps(m.group(1)), body))


def is_json_template(text: str) -> bool:
    return text.lstrip().startswith("```json")


# --- every file exists and is text -------------------------------------------------------------


@pytest.mark.parametrize("name", PROMPT_FILES)
def test_prompt_file_exists_and_is_utf8(name: str) -> None:
    path = PROMPTS / name
    assert path.is_file(), f"missing {path}"
    read(path)


@pytest.mark.parametrize("rel", PROFILE_FILES)
def test_profile_file_exists_and_is_utf8(rel: str) -> None:
    path = AGENTS / rel
    assert path.is_file(), f"missing {path}"
    read(path)


# --- variables ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PROMPT_FILES)
def test_placeholders_use_exactly_the_documented_variables(name: str) -> None:
    text = prompt(name)
    assert placeholders(text) == VARIABLES[name]
    assert condition_names(text) <= VARIABLES[name]


@pytest.mark.parametrize("name", PROMPT_FILES)
def test_directives_are_well_formed(name: str) -> None:
    text = prompt(name)
    assert len(CONDITION.findall(text)) == len(re.findall(r"\{\{\s*endif\s*\}\}", text))
    leftovers = PLACEHOLDER.sub("", DIRECTIVE.sub("", text))
    assert "{{" not in leftovers, "a '{{' that is neither a placeholder nor a directive"
    for included in INCLUDE.findall(text):
        assert (PROMPTS / included).is_file(), f"{name} includes missing {included}"


# --- JSON templates ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in PROMPT_FILES if is_json_template(prompt(n))])
def test_json_templates_load_as_dicts(name: str) -> None:
    data = load_json_template(prompt(name))
    assert isinstance(data, dict)


@pytest.mark.parametrize("name", sorted(JSON_TEMPLATES))
def test_json_template_shapes(name: str) -> None:
    text = prompt(name)
    assert is_json_template(text)
    assert set(load_json_template(text)) == JSON_TEMPLATES[name]


def test_json_placeholders_are_unquoted() -> None:
    for name in JSON_TEMPLATES:
        text = prompt(name)
        assert not re.search(r"\"\{\{\s*\w+\s*\}\}\"", text), f"{name}: quoted placeholder"


def test_json_templates_substitute_values_in_place() -> None:
    text = prompt("fw.user_message.md")
    values = {"system_message": "", "message": 'say "hi"\n', "attachments": ["a.csv"]}
    body = JSON_BLOCK.match(text.strip())
    assert body
    data = json.loads(PLACEHOLDER.sub(lambda m: json.dumps(values[m.group(1)]), body.group(1)))
    assert data == {"system_message": "", "user_message": 'say "hi"\n', "attachments": ["a.csv"]}


def test_initial_message_is_a_response_call() -> None:
    data = load_json_template(prompt("fw.initial_message.md"))
    assert data["tool_name"] == "response"
    assert isinstance(data["thoughts"], list) and data["thoughts"]
    assert isinstance(data["tool_args"]["text"], str) and data["tool_args"]["text"].strip()


def test_ai_response_is_the_bare_message() -> None:
    assert prompt("fw.ai_response.md").strip() == "{{message}}"


# --- the system prompt -----------------------------------------------------------------------


def test_main_includes_its_parts_in_order() -> None:
    text = prompt("agent.system.main.md")
    assert text.lstrip().startswith("#"), "main prompt starts with a heading"
    assert INCLUDE.findall(text) == MAIN_PARTS


def test_specifics_is_empty() -> None:
    assert (PROMPTS / "agent.system.main.specifics.md").read_bytes() == b""


def test_communication_states_the_contract() -> None:
    text = prompt("agent.system.main.communication.md")
    flat = " ".join(text.split()).lower()
    assert re.search(r"tool_name`? must exactly match", flat), "exact tool-name rule"
    assert re.search(r"tool_args`? is always a json object", flat), "tool_args-is-an-object rule"
    assert "one object per reply" in flat
    assert "nothing outside" in flat
    for key in ("thoughts", "headline", "tool_name", "tool_args"):
        assert f"`{key}`" in text


def test_communication_example_is_a_complete_response_call() -> None:
    lines = prompt("agent.system.main.communication.md").splitlines()
    start = lines.index("{")
    end = lines.index("}", start)
    data = json.loads("\n".join(lines[start : end + 1]))
    assert set(data) == {"thoughts", "headline", "tool_name", "tool_args"}
    assert data["tool_name"] == "response"
    assert isinstance(data["tool_args"], dict) and data["tool_args"]["text"]


def test_tools_wrapper_has_header() -> None:
    text = prompt("agent.system.tools.md")
    assert "Available tools" in text and "{{tools}}" in text


@pytest.mark.parametrize("name", sorted(TOOL_FILES))
def test_tool_file_has_one_valid_example(name: str) -> None:
    tool, args = TOOL_FILES[name]
    text = prompt(name)
    blocks = TILDE_BLOCK.findall(text)
    assert len(blocks) == 1, "exactly one ~~~json example"
    call = json.loads(blocks[0])
    assert set(call) == {"thoughts", "headline", "tool_name", "tool_args"}
    assert call["tool_name"].split(":", 1)[0] == tool
    assert isinstance(call["tool_args"], dict)
    assert set(call["tool_args"]) <= args
    for arg in args:
        assert f"`{arg}`" in text, f"argument {arg} is not described"


def test_skills_tool_documents_every_method() -> None:
    text = prompt("agent.system.tool.skills.md")
    for method in ("list", "search", "load", "read_file"):
        assert f"skills_tool:{method}" in text


def test_code_execution_names_both_runtimes() -> None:
    text = prompt("agent.system.tool.code_execution.md")
    assert '"python"' in text and '"terminal"' in text


def test_default_system_prompt_is_compact() -> None:
    words = sum(len(prompt(name).split()) for name in DEFAULT_SYSTEM_PROMPT)
    assert words < WORD_BUDGET, f"{words} words"


# --- other templates with a fixed shape ------------------------------------------------------


def test_extras_template_is_two_lines() -> None:
    assert prompt("agent.context.extras.md").splitlines() == ["[EXTRAS]", "{{extras}}"]


def test_truncation_markers_say_what_happened() -> None:
    assert "CHARACTERS REMOVED" in prompt("fw.msg_truncated.md")
    assert "{{length}}" in prompt("fw.code.truncated.md")


def test_misformat_shows_the_expected_shape() -> None:
    text = prompt("fw.msg_misformat.md")
    lines = text.splitlines()
    shape = json.loads("\n".join(lines[lines.index("{") : lines.index("}") + 1]))
    assert set(shape) == {"thoughts", "headline", "tool_name", "tool_args"}


def test_project_rules_and_optional_lines() -> None:
    text = prompt("agent.system.projects.active.md")
    assert ".a0proj" in text
    assert condition_names(text) >= {"project_name", "project_description"}


# --- profiles -----------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_profile_yaml_has_card_fields(profile: str) -> None:
    data = yaml.safe_load(read(AGENTS / profile / "agent.yaml"))
    assert isinstance(data, dict)
    for key in ("title", "description", "context"):
        assert isinstance(data.get(key), str) and data[key].strip(), f"{profile}: {key}"


def test_every_profile_folder_is_known() -> None:
    assert sorted(p.name for p in AGENTS.iterdir() if p.is_dir()) == sorted(PROFILES)


@pytest.mark.parametrize("profile", ["developer", "researcher", "_example"])
def test_profile_specifics_are_not_empty(profile: str) -> None:
    assert read(AGENTS / profile / "prompts" / "agent.system.main.specifics.md").strip()


def test_example_role_extends_the_original() -> None:
    lines = read(AGENTS / "_example/prompts/agent.system.main.role.md").strip().splitlines()
    assert re.fullmatch(r"\{\{\s*include original\s*\}\}", lines[0])
    assert len([line for line in lines[1:] if line.strip()]) == 2


def test_example_readme_explains_each_file() -> None:
    readme = read(AGENTS / "_example/README.md")
    for rel in PROFILE_FILES:
        if rel.startswith("_example/") and not rel.endswith("README.md"):
            assert rel.removeprefix("_example/") in readme, rel


# --- the two Python files: shape without importing a0nb ------------------------------------


def classes_with_base(path: Path, base: str) -> list[ast.ClassDef]:
    tree = ast.parse(read(path))
    imported = any(
        isinstance(node, ast.ImportFrom) and node.module == "a0nb.ext" and base in {a.name for a in node.names}
        for node in tree.body
    )
    assert imported, f"{path.name} must import {base} from a0nb.ext"
    return [
        node
        for node in tree.body
        if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == base for b in node.bases)
    ]


@pytest.mark.parametrize(
    ("rel", "base", "method"),
    [
        ("prompts/agent.system.tool.call_subordinate.py", "VariablesPlugin", "get_variables"),
        ("agents/_example/tools/response.py", "Tool", "execute"),
        ("agents/_example/extensions/message_loop_prompts_after/_80_example_note.py", "Extension", "execute"),
    ],
)
def test_python_files_define_one_subclass(rel: str, base: str, method: str) -> None:
    found = classes_with_base(REPO / rel, base)
    assert len(found) == 1
    names = {f.name for f in found[0].body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assert method in names


# --- the profiles variable plugin, run against a stand-in base class when a0nb lacks one -----


@dataclass
class Card:
    title: str
    description: str


class AgentWithProfiles:
    def __init__(self, cards: dict[str, Card]) -> None:
        self.cards = cards

    def profiles(self) -> dict[str, Card]:
        return self.cards


@pytest.fixture()
def subordinate_plugin(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    try:
        from a0nb import VariablesPlugin  # noqa: F401
    except ImportError:
        stub = types.ModuleType("a0nb")
        stub.VariablesPlugin = type("VariablesPlugin", (), {})  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "a0nb", stub)
    path = PROMPTS / "agent.system.tool.call_subordinate.py"
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # (a cache written into the installation's prompts/
    spec = importlib.util.spec_from_file_location("_test_call_subordinate_vars", path)  # would change its mtime)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plugin_class(module: types.ModuleType) -> type:
    base = sys.modules["a0nb"].VariablesPlugin
    return next(v for v in vars(module).values() if isinstance(v, type) and v is not base and issubclass(v, base))


def test_profiles_variable_lists_each_profile(subordinate_plugin: types.ModuleType) -> None:
    agent = AgentWithProfiles(
        {
            "researcher": Card("Researcher", "Finds\nevidence."),
            "developer": Card("Developer", "Writes code."),
        }
    )
    plugin = plugin_class(subordinate_plugin)()
    text = plugin.get_variables("agent.system.tool.call_subordinate.md", [], _agent=agent)["profiles"]
    lines = text.splitlines()
    assert len(lines) == 2 and all(line.startswith("- ") for line in lines)
    assert "developer" in lines[0] and "Writes code." in lines[0]
    assert "Researcher" in lines[1] and "Finds evidence." in lines[1]


@pytest.mark.parametrize("agent", [None, object(), AgentWithProfiles({})])
def test_profiles_variable_has_a_placeholder(subordinate_plugin: types.ModuleType, agent: Any) -> None:
    plugin = plugin_class(subordinate_plugin)()
    text = plugin.get_variables("agent.system.tool.call_subordinate.md", [], _agent=agent)["profiles"]
    assert text.strip().startswith("-") and "no other profiles" in text
