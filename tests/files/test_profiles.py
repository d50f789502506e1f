from __future__ import annotations

from pathlib import Path

from a0nb.diagnostics import Diagnostics
from a0nb.files.roots import search_roots
from a0nb.files.profiles import Profile, agents_dirs, discover_profiles, unknown_profile_message


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def roots(tmp_path: Path) -> list[tuple[str, Path]]:
    return [(label, tmp_path / label / "agents") for label in ("project", "notebook", "user", "bundled")]


def test_single_profile(tmp_path: Path) -> None:
    write(tmp_path / "bundled/agents/developer/agent.yaml",
          "title: Developer\ndescription: Writes code\ncontext: |\n  Use me for code.\n")
    diags = Diagnostics()
    profiles = discover_profiles(roots(tmp_path), diags)
    assert profiles == {"developer": Profile("developer", "Developer", "Writes code", "Use me for code.",
                                             tmp_path / "bundled/agents/developer", "bundled", True)}
    assert len(diags) == 0


def test_merge_across_roots_higher_non_empty_fields_win(tmp_path: Path) -> None:
    write(tmp_path / "bundled/agents/dev/agent.yaml", "title: Dev\ndescription: bundled d\ncontext: bundled c\n")
    write(tmp_path / "user/agents/dev/agent.yaml", "description: user d\n")
    write(tmp_path / "project/agents/dev/agent.yaml", "title: Project Dev\ndescription: ''\n")
    write(tmp_path / "bundled/agents/other/agent.yaml", "title: Other\n")
    profiles = discover_profiles(roots(tmp_path), Diagnostics())
    dev = profiles["dev"]
    assert (dev.title, dev.description, dev.context) == ("Project Dev", "user d", "bundled c")
    assert dev.path == tmp_path / "project/agents/dev" and dev.root_label == "project"
    assert list(profiles) == ["dev", "other"]
    assert profiles["other"].root_label == "bundled"


def test_enabled_highest_explicit_value_wins(tmp_path: Path) -> None:
    write(tmp_path / "bundled/agents/a/agent.yaml", "title: A\nenabled: false\n")
    write(tmp_path / "user/agents/a/agent.yaml", "title: A2\n")
    write(tmp_path / "bundled/agents/b/agent.yaml", "title: B\n")
    write(tmp_path / "project/agents/b/agent.yaml", "enabled: false\n")
    write(tmp_path / "bundled/agents/c/agent.yaml", "enabled: false\n")
    write(tmp_path / "notebook/agents/c/agent.yaml", "enabled: true\n")
    profiles = discover_profiles(roots(tmp_path), Diagnostics())
    assert [profiles[n].enabled for n in "abc"] == [False, False, True]
    assert profiles["b"].title == "B"


def test_invalid_yaml_reports_line_and_skips_that_definition(tmp_path: Path) -> None:
    bad = write(tmp_path / "project/agents/dev/agent.yaml", "title: Dev\ndescription: ok\ncontext: [unclosed\n")
    write(tmp_path / "bundled/agents/dev/agent.yaml", "title: Bundled Dev\n")
    only = write(tmp_path / "user/agents/solo/agent.yaml", "title: x\n  bad: indent: here\n")
    diags = Diagnostics()
    profiles = discover_profiles(roots(tmp_path), diags)
    assert profiles["dev"].title == "Bundled Dev" and profiles["dev"].root_label == "bundled"
    assert "solo" not in profiles
    errors = {d.path: d for d in diags.of("profile") if d.severity == "error"}
    assert set(errors) == {str(bad), str(only)}
    assert errors[str(bad)].line == 4 and "YAML" in errors[str(bad)].message
    assert errors[str(only)].line == 2


def test_agent_json_fallback_and_invalid_json(tmp_path: Path) -> None:
    write(tmp_path / "user/agents/j/agent.json", '{"title": "From JSON", "context": "c"}')
    bad = write(tmp_path / "user/agents/k/agent.json", '{\n"title": "x",\n}')
    write(tmp_path / "user/agents/both/agent.yaml", "title: yaml wins\n")
    write(tmp_path / "user/agents/both/agent.json", '{"title": "json"}')
    diags = Diagnostics()
    profiles = discover_profiles(roots(tmp_path), diags)
    assert profiles["j"].title == "From JSON" and profiles["both"].title == "yaml wins"
    assert "k" not in profiles
    (d,) = diags.of("profile")
    assert d.path == str(bad) and d.line == 3 and "JSON" in d.message


def test_hidden_folders_files_and_missing_dirs(tmp_path: Path) -> None:
    write(tmp_path / "user/agents/.hidden/agent.yaml", "title: H\n")
    write(tmp_path / "user/agents/__pycache__/x.pyc", "")
    write(tmp_path / "user/agents/notes.md", "not a folder")
    write(tmp_path / "user/agents/_example/agent.yaml", "title: Example\n")
    diags = Diagnostics()
    profiles = discover_profiles([("missing", tmp_path / "nope"), *roots(tmp_path)], diags)
    assert list(profiles) == ["_example"]
    assert len(diags) == 0


def test_folder_without_agent_yaml(tmp_path: Path) -> None:
    write(tmp_path / "notebook/agents/bare/prompts/agent.system.main.role.md", "role")
    write(tmp_path / "notebook/agents/legacy/_context.md", "Legacy context.\n")
    (tmp_path / "notebook/agents/empty").mkdir(parents=True)
    diags = Diagnostics()
    profiles = discover_profiles(roots(tmp_path), diags)
    assert profiles["bare"] == Profile("bare", "bare", "", "", tmp_path / "notebook/agents/bare", "notebook")
    assert profiles["legacy"].context == "Legacy context."
    assert "empty" not in profiles
    assert {Path(d.path).name for d in diags} == {"bare", "legacy", "empty"}
    assert all(d.severity == "info" for d in diags)


def test_empty_and_non_mapping_definitions(tmp_path: Path) -> None:
    write(tmp_path / "user/agents/empty/agent.yaml", "# nothing yet\n")
    lst = write(tmp_path / "user/agents/list/agent.yaml", "- a\n- b\n")
    diags = Diagnostics()
    profiles = discover_profiles(roots(tmp_path), diags)
    assert profiles["empty"].title == "empty"
    assert "list" not in profiles
    (d,) = diags
    assert d.path == str(lst) and d.severity == "error"


def test_field_problems_are_reported(tmp_path: Path) -> None:
    path = write(tmp_path / "user/agents/p/agent.yaml",
                 "name: other\ntitle: 42\nenabled: maybe\nextra: 1\ndescription: fine\n")
    diags = Diagnostics()
    p = discover_profiles(roots(tmp_path), diags)["p"]
    assert (p.name, p.title, p.description, p.enabled) == ("p", "p", "fine", True)
    messages = [d.message for d in diags if d.path == str(path)]
    assert len(messages) == 4
    assert any("'other'" in m for m in messages) and any("extra" in m for m in messages)


def test_legacy_context_md_is_the_context_of_its_root(tmp_path: Path) -> None:
    write(tmp_path / "bundled/agents/x/agent.yaml", "title: X\ncontext: from yaml\n")
    write(tmp_path / "user/agents/x/_context.md", "from md")
    profile = discover_profiles(roots(tmp_path), Diagnostics())["x"]
    assert (profile.title, profile.context, profile.root_label) == ("X", "from md", "user")


def test_agents_dirs_follow_the_search_hierarchy(tmp_path: Path) -> None:
    nb, home, bundled, plugin = (tmp_path / n for n in ("nb", "home", "bundled", "plug"))
    rs = search_roots(nb, "dev", home=home, plugin_dirs=[("demo", plugin)], bundled=bundled)
    dirs = agents_dirs(rs)
    assert dirs == [("project", nb.resolve() / ".a0proj/agents"), ("notebook", nb.resolve() / "agents"),
                    ("user", home / "agents"), ("plugin demo", plugin / "agents"), ("bundled", bundled / "agents")]
    write(plugin / "agents/dev/agent.yaml", "title: Plugin Dev\n")
    write(nb / "agents/dev/agent.yaml", "description: notebook d\n")
    dev = discover_profiles(dirs, Diagnostics())["dev"]
    assert (dev.title, dev.description, dev.root_label) == ("Plugin Dev", "notebook d", "notebook")


def test_unknown_profile_message() -> None:
    msg = unknown_profile_message("develper", ["researcher", "developer", "default", "developer"])
    assert "\n" not in msg
    assert "'develper'" in msg and "Did you mean 'developer'?" in msg
    assert msg.endswith("Available profiles: default, developer, researcher.")
    assert "Did you mean" not in unknown_profile_message("zzz", ["default"])
    assert "No profiles are available" in unknown_profile_message("x", [])
