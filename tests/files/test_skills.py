"""Tests for a0nb.files.skills: validation diagnostics, discovery across roots, caching, search,
the load text, and reads confined to the skill's folder."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from a0nb.diagnostics import Diagnostics
from a0nb.errors import RepairableError
from a0nb.resources import bundled_root
from a0nb.files.skills import (
    Skill,
    SkillIndex,
    discover_skills,
    normalise_name,
    parse_skill,
    read_skill_file,
    search_skills,
    skill_text,
)


def write_skill(folder: Path, frontmatter: str, body: str = "Do the thing.", name: str = "SKILL.md") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"---\n{frontmatter.strip()}\n---\n{body}\n")
    return path


def many_files(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        os.close(os.open(folder / f"f{i}.txt", os.O_CREAT | os.O_WRONLY, 0o644))


def simple(folder: Path, name: str, description: str = "does things", extra: str = "") -> Path:
    return write_skill(folder, f"name: {name}\ndescription: {description}\n{extra}")


def parsed(tmp_path: Path, frontmatter: str) -> tuple[Skill | None, Diagnostics]:
    diags = Diagnostics()
    path = write_skill(tmp_path / "s", frontmatter)
    return parse_skill(path, "test", diags), diags


def messages(diags: Diagnostics) -> list[str]:
    return [d.message for d in diags.of("skill")]


# ---------------------------------------------------------------- parsing


def test_parse_full_skill(tmp_path: Path) -> None:
    skill, diags = parsed(tmp_path, """
name: "create-skill"
description: Makes new skills.
version: 1.2
author: Ann
license: MIT
compatibility: python>=3.10
tags: [a, b]
triggers: "make skill, new skill"
allowed-tools: code_execution response
metadata:
  owner: team
""")
    assert skill is not None and len(diags) == 0
    assert skill.name == "create-skill"
    assert skill.description == "Makes new skills."
    assert skill.version == "1.2" and skill.author == "Ann" and skill.license == "MIT"
    assert skill.compatibility == "python>=3.10"
    assert skill.tags == ("a", "b")
    assert skill.triggers == ("make", "skill", "new", "skill")
    assert skill.allowed_tools == ("code_execution", "response")
    assert dict(skill.metadata) == {"owner": "team"}
    assert skill.body == "Do the thing."
    assert skill.path.name == "SKILL.md" and skill.folder == skill.path.parent
    assert skill.root_label == "test"
    hash(skill)  # frozen and usable in sets despite the metadata mapping


@pytest.mark.parametrize(
    ("frontmatter", "field", "value"),
    [
        ("skill: via-alias\ndescription: d", "name", "via-alias"),
        ("name: n\nwhen_to_use: when needed", "description", "when needed"),
        ("name: n\nsummary: short", "description", "short"),
        ("name: n\ndescription: d\ntag: one, two", "tags", ("one", "two")),
        ("name: n\ndescription: d\ntrigger_patterns: [x]", "triggers", ("x",)),
        ("name: n\ndescription: d\ntrigger: y", "triggers", ("y",)),
        ("name: n\ndescription: d\nactivation: z", "triggers", ("z",)),
        ("name: n\ndescription: d\nallowed_tools: [t1]", "allowed_tools", ("t1",)),
        ("name: n\ndescription: d\ntools: t2,t3", "allowed_tools", ("t2", "t3")),
    ],
)
def test_aliases(tmp_path: Path, frontmatter: str, field: str, value: object) -> None:
    skill, _ = parsed(tmp_path, frontmatter)
    assert skill is not None and getattr(skill, field) == value


def test_leading_blank_lines_and_bom_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes("\ufeff\n\n  \n---\nname: ok\ndescription: d\n---\nbody".encode())
    diags = Diagnostics()
    skill = parse_skill(path, "t", diags)
    assert skill is not None and skill.body == "body" and len(diags) == 0


def test_empty_body(tmp_path: Path) -> None:
    skill, _ = parsed(tmp_path, "name: n\ndescription: d")
    diags = Diagnostics()
    path = tmp_path / "e" / "SKILL.md"
    path.parent.mkdir()
    path.write_text("---\nname: e\ndescription: d\n---\n")
    skill = parse_skill(path, "t", diags)
    assert skill is not None and skill.body == ""
    assert "(none)" in skill_text(skill)


def test_normalise_name() -> None:
    assert normalise_name("  My Skill\tName ") == "my-skill-name"
    assert normalise_name("pdf-tools") == "pdf-tools"


# ---------------------------------------------------------------- every validation rule has its diagnostic


@pytest.mark.parametrize(
    ("frontmatter", "needle"),
    [
        ("description: d", "`name` is missing"),
        ("name: ''\ndescription: d", "`name` is missing"),
        ("name: [a, b]\ndescription: d", "`name` must be text"),
        (f"name: {'a' * 65}\ndescription: d", "more than 64"),
        ("name: Bad_Name\ndescription: d", "lower-case letters, digits and hyphens"),
        ("name: has space\ndescription: d", "lower-case letters, digits and hyphens"),
        ("name: -lead\ndescription: d", "starts or ends with a hyphen"),
        ("name: trail-\ndescription: d", "starts or ends with a hyphen"),
        ("name: a--b\ndescription: d", "contains `--`"),
        ("name: ok", "`description` is missing"),
        ("name: ok\ndescription: '   '", "`description` is missing"),
        (f"name: ok\ndescription: {'x' * 1025}", "more than 1024"),
        (f"name: ok\ndescription: d\ncompatibility: {'c' * 501}", "`compatibility` is 501 characters"),
    ],
)
def test_each_rule_gives_a_diagnostic(tmp_path: Path, frontmatter: str, needle: str) -> None:
    skill, diags = parsed(tmp_path, frontmatter)
    assert skill is None
    found = [d for d in diags.of("skill") if needle in d.message]
    assert found, messages(diags)
    assert found[0].severity == "error"
    assert found[0].path == str(tmp_path / "s" / "SKILL.md")
    assert found[0].fix


def test_limits_are_inclusive(tmp_path: Path) -> None:
    skill, diags = parsed(
        tmp_path, f"name: {'a' * 64}\ndescription: {'x' * 1024}\ncompatibility: {'c' * 500}"
    )
    assert skill is not None and len(diags) == 0


def test_all_broken_rules_are_reported_at_once(tmp_path: Path) -> None:
    skill, diags = parsed(tmp_path, f"name: Bad_Name\ncompatibility: {'c' * 501}")
    assert skill is None and len(diags.of("skill")) == 3


def test_no_frontmatter(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("# Title\n---\nname: x\n---\n")
    diags = Diagnostics()
    assert parse_skill(path, "t", diags) is None
    (d,) = diags.of("skill")
    assert "no frontmatter" in d.message and d.line == 1


def test_unclosed_frontmatter(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("---\nname: x\ndescription: d\n")
    diags = Diagnostics()
    assert parse_skill(path, "t", diags) is None
    assert "never closed" in messages(diags)[0]


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("")
    diags = Diagnostics()
    assert parse_skill(path, "t", diags) is None
    assert "no frontmatter" in messages(diags)[0]


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    # line 1 is blank, 2 the fence, 3 `name`, 4 a tab-indented line (YAML forbids tabs there)
    path.write_text("\n---\nname: ok\n\tdescription: d\n---\nbody\n")
    diags = Diagnostics()
    assert parse_skill(path, "t", diags) is None
    (d,) = diags.of("skill")
    assert "invalid YAML" in d.message and d.severity == "error"
    assert d.line is not None and 4 <= d.line <= 5


def test_yaml_that_plain_lines_can_rescue_gives_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("---\nname: colon-skill\ndescription: Use when: the user asks\n---\nbody\n")
    diags = Diagnostics()
    skill = parse_skill(path, "t", diags)
    assert skill is not None and skill.description == "Use when: the user asks"
    (d,) = diags.of("skill")
    assert d.severity == "warning" and d.line == 3


def test_frontmatter_that_is_not_a_mapping(tmp_path: Path) -> None:
    skill, diags = parsed(tmp_path, "- just\n- a list")
    assert skill is None and "not a mapping" in messages(diags)[0]


def test_metadata_not_a_mapping_is_a_warning(tmp_path: Path) -> None:
    skill, diags = parsed(tmp_path, "name: n\ndescription: d\nmetadata: nope")
    assert skill is not None and dict(skill.metadata) == {}
    assert diags.of("skill")[0].severity == "warning"


def test_binary_skill_file(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(b"---\nname: x\x00\x01\n---\n")
    diags = Diagnostics()
    assert parse_skill(path, "t", diags) is None
    assert "binary" in messages(diags)[0]


def test_non_utf8_skill_file(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(b"---\nname: x\ndescription: caf\xe9\n---\n")
    diags = Diagnostics()
    assert parse_skill(path, "t", diags) is None
    assert "UTF-8" in messages(diags)[0]


def test_unreadable_skill_file(tmp_path: Path) -> None:
    diags = Diagnostics()
    assert parse_skill(tmp_path / "missing" / "SKILL.md", "t", diags) is None
    assert "cannot read" in messages(diags)[0]
    # a folder where the file should be
    (tmp_path / "dir" / "SKILL.md").mkdir(parents=True)
    assert parse_skill(tmp_path / "dir" / "SKILL.md", "t", diags) is None


# ---------------------------------------------------------------- discovery


def test_bad_name_is_never_listed_but_is_reported(tmp_path: Path) -> None:
    simple(tmp_path / "good", "good")
    bad = simple(tmp_path / "bad", "Bad_Name")
    diags = Diagnostics()
    skills = discover_skills([("user", tmp_path)], diags)
    assert list(skills) == ["good"]
    (d,) = diags.of("skill")
    assert d.path == str(bad) and "Bad_Name" in d.message


def test_recursive_sorted_and_hidden_parts_skipped(tmp_path: Path) -> None:
    simple(tmp_path / "b", "bee")
    simple(tmp_path / "a", "ay")
    simple(tmp_path / "group" / "deep" / "inner", "deep-one")
    simple(tmp_path / ".hidden", "hidden")
    simple(tmp_path / "x" / ".cache" / "y", "hidden-too")
    (tmp_path / "notes.md").write_text("not a skill")
    skills = discover_skills([("user", tmp_path)], Diagnostics())
    assert list(skills) == ["ay", "bee", "deep-one"]


def test_name_need_not_match_folder(tmp_path: Path) -> None:
    simple(tmp_path / "folder-name", "other-name")
    skills = discover_skills([("user", tmp_path)], Diagnostics())
    assert skills["other-name"].folder.name == "folder-name"


def test_duplicates_across_roots_first_root_wins_with_info(tmp_path: Path) -> None:
    high = simple(tmp_path / "hi" / "x", "shared", "from high")
    low = simple(tmp_path / "lo" / "x", "shared", "from low")
    diags = Diagnostics()
    skills = discover_skills([("project", tmp_path / "hi"), ("bundled", tmp_path / "lo")], diags)
    assert skills["shared"].description == "from high" and skills["shared"].root_label == "project"
    (d,) = diags.of("skill")
    assert d.severity == "info"
    assert d.path == str(low) and str(high) in d.message


def test_duplicates_match_on_normalised_name(tmp_path: Path) -> None:
    # quoted names with spaces fail validation, so normalisation matters only for case-equal names
    simple(tmp_path / "hi" / "x", "same")
    simple(tmp_path / "lo" / "x", "same")
    assert len(discover_skills([("a", tmp_path / "hi"), ("b", tmp_path / "lo")], Diagnostics())) == 1


def test_duplicates_within_one_root_are_a_warning(tmp_path: Path) -> None:
    simple(tmp_path / "a", "twin")
    simple(tmp_path / "b", "twin")
    diags = Diagnostics()
    skills = discover_skills([("user", tmp_path)], diags)
    assert skills["twin"].folder.name == "a"
    assert diags.of("skill")[0].severity == "warning"


def test_missing_roots_are_skipped_quietly(tmp_path: Path) -> None:
    diags = Diagnostics()
    assert discover_skills([("user", tmp_path / "absent")], diags) == {}
    assert len(diags) == 0


def test_linked_skill_folder_is_found_once(tmp_path: Path) -> None:
    simple(tmp_path / "store" / "linked", "linked")
    root = tmp_path / "skills"
    root.mkdir()
    (root / "linked").symlink_to(tmp_path / "store" / "linked", target_is_directory=True)
    (root / "loop").symlink_to(root, target_is_directory=True)
    assert list(discover_skills([("user", root)], Diagnostics())) == ["linked"]


def test_ten_thousand_files_walk_is_cut_but_siblings_are_found(tmp_path: Path) -> None:
    big = tmp_path / "big"
    simple(big, "big")
    many_files(big / "data", 10_000)
    for name in ("after-a", "after-b"):
        simple(tmp_path / name, name)
    diags = Diagnostics()
    skills = discover_skills([("user", tmp_path)], diags, max_files_per_root=500)
    assert set(skills) == {"big", "after-a", "after-b"}
    (d,) = diags.of("skill")
    assert "walk cut at 500 files" in d.message and d.severity == "warning"


def test_ten_thousand_file_folder_with_default_limit(tmp_path: Path) -> None:
    many_files(tmp_path / "s" / "data", 10_000)
    simple(tmp_path / "s", "s")
    diags = Diagnostics()
    assert list(discover_skills([("user", tmp_path)], diags)) == ["s"]
    assert "walk cut at 5000 files" in messages(diags)[0]


def test_bundled_skills_are_valid() -> None:
    diags = Diagnostics()
    skills = discover_skills([("bundled", bundled_root() / "skills")], diags)
    assert {"pandas-inspect", "debug-traceback", "plot-quick"} <= set(skills)
    assert len(diags) == 0, diags.text()
    for skill in skills.values():
        assert skill.tags and skill.body
    assert "pandas" in read_skill_file(skills["pandas-inspect"], "reference.md")


# ---------------------------------------------------------------- the cached index


def test_index_is_warm_until_something_changes(tmp_path: Path) -> None:
    path = simple(tmp_path / "one", "one")
    index = SkillIndex(Diagnostics())
    roots = [("user", tmp_path)]
    assert list(index.get(roots)) == ["one"]
    index.get(roots)
    assert index.discoveries == 1

    # an edited SKILL.md (size changes) is picked up
    path.write_text("---\nname: one\ndescription: changed text here\n---\n")
    assert index.get(roots)["one"].description == "changed text here"
    assert index.discoveries == 2

    # a new skill folder changes the root's mtime
    simple(tmp_path / "two", "two")
    assert set(index.get(roots)) == {"one", "two"}

    # a removed skill disappears
    (tmp_path / "two" / "SKILL.md").unlink()
    assert set(index.get(roots)) == {"one"}


def test_index_notices_same_size_edit_via_mtime(tmp_path: Path) -> None:
    path = simple(tmp_path / "one", "one", "aaaa")
    index = SkillIndex(Diagnostics())
    roots = [("user", tmp_path)]
    index.get(roots)
    path.write_text(path.read_text().replace("aaaa", "bbbb"))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert index.get(roots)["one"].description == "bbbb"


def test_index_notices_a_root_that_appears(tmp_path: Path) -> None:
    index = SkillIndex(Diagnostics())
    roots = [("user", tmp_path / "later")]
    assert index.get(roots) == {}
    simple(tmp_path / "later" / "x", "x")
    assert list(index.get(roots)) == ["x"]


def test_index_rediscovers_when_roots_change(tmp_path: Path) -> None:
    simple(tmp_path / "a" / "s", "in-a")
    simple(tmp_path / "b" / "s", "in-b")
    index = SkillIndex(Diagnostics())
    assert list(index.get([("u", tmp_path / "a")])) == ["in-a"]
    assert list(index.get([("u", tmp_path / "b")])) == ["in-b"]


def test_index_refreshes_diagnostics(tmp_path: Path) -> None:
    path = simple(tmp_path / "s", "Bad_Name")
    diags = Diagnostics()
    diags.add("warning", "tool", "unrelated")
    index = SkillIndex(diags)
    index.get([("u", tmp_path)])
    assert len(diags.of("skill")) == 1
    path.write_text("---\nname: fixed-name\ndescription: now valid\n---\n")
    assert list(index.get([("u", tmp_path)])) == ["fixed-name"]
    assert diags.of("skill") == [] and len(diags.of("tool")) == 1


def test_index_result_is_a_copy(tmp_path: Path) -> None:
    simple(tmp_path / "s", "s")
    index = SkillIndex(Diagnostics())
    index.get([("u", tmp_path)]).clear()
    assert list(index.get([("u", tmp_path)])) == ["s"]


# ---------------------------------------------------------------- search (§8.3 item 22)


def make(name: str, description: str, tags: tuple[str, ...] = ()) -> Skill:
    return Skill(name=name, description=description, path=Path(name) / "SKILL.md", folder=Path(name),
                 root_label="t", tags=tags)


def test_search_acceptance_scores_and_order() -> None:
    skills = [make("docs", "pdf reader", ("pdf",)), make("pdf-tools", "edit pdf files")]
    hits = search_skills(skills, "pdf")
    assert [(s.name, score) for s, score in hits] == [("pdf-tools", 5), ("docs", 3)]


def test_search_acceptance_from_disk(tmp_path: Path) -> None:
    simple(tmp_path / "pdf-tools", "pdf-tools", "edit pdf files")
    simple(tmp_path / "docs", "docs", "pdf reader", "tags: [pdf]")
    simple(tmp_path / "bad", "Bad_Name", "pdf everything", "tags: [pdf]")
    skills = discover_skills([("user", tmp_path)], Diagnostics())
    assert [s.name for s, _ in search_skills(skills.values(), "pdf")] == ["pdf-tools", "docs"]


def test_search_multiple_terms_case_and_ties() -> None:
    skills = [make("b-plot", "Charts"), make("a-plot", "charts"), make("other", "nothing")]
    hits = search_skills(skills, "PLOT charts")
    assert [(s.name, score) for s, score in hits] == [("a-plot", 5), ("b-plot", 5)]


def test_search_tag_substring_and_limit() -> None:
    skills = [make(f"s{i}", "x", ("visualisation",)) for i in range(30)]
    hits = search_skills(skills, "visual")
    assert len(hits) == 25 and all(score == 1 for _, score in hits)
    assert len(search_skills(skills, "visual", limit=3)) == 3


def test_search_empty_query_and_no_hits() -> None:
    skills = [make("a", "b")]
    assert search_skills(skills, "") == [] and search_skills(skills, "   ") == []
    assert search_skills(skills, "zzz") == []


# ---------------------------------------------------------------- load text


def test_skill_text_contents(tmp_path: Path) -> None:
    folder = tmp_path / "pdf-tools"
    simple(folder, "pdf-tools", "edit pdf files", "version: 2\ntags: [pdf, docs]\nauthor: ''")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "merge.py").write_text("print('x')")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"\0")
    skill = discover_skills([("user", tmp_path)], Diagnostics())["pdf-tools"]
    text = skill_text(skill)
    assert text.startswith("Skill: pdf-tools\n")
    assert str(folder) in text
    assert "Version: 2" in text and "Tags: pdf, docs" in text
    assert "Author" not in text and "License" not in text and "Triggers" not in text
    assert "edit pdf files" in text and "Do the thing." in text
    assert "skills_tool:read_file" in text
    assert "merge.py" in text and "scripts/" in text
    assert "__pycache__" not in text


def test_skill_text_without_other_files(tmp_path: Path) -> None:
    simple(tmp_path / "lonely", "lonely")
    text = skill_text(discover_skills([("u", tmp_path)], Diagnostics())["lonely"])
    assert "no other files" in text and "read_file" not in text


# ---------------------------------------------------------------- reading files inside the skill


@pytest.fixture
def skill_with_files(tmp_path: Path) -> Skill:
    folder = tmp_path / "skills" / "tool"
    simple(folder, "tool")
    (folder / "ref.md").write_text("reference text")
    (folder / "sub").mkdir()
    (folder / "sub" / "deep.txt").write_text("deep")
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    (tmp_path / "outside.txt").write_text("secret")
    (folder / "escape").symlink_to(tmp_path / "outside.txt")
    (folder / "escape-dir").symlink_to(tmp_path, target_is_directory=True)
    (folder / "alias.md").symlink_to(folder / "ref.md")
    return discover_skills([("u", tmp_path / "skills")], Diagnostics())["tool"]


def test_read_file_inside(skill_with_files: Skill) -> None:
    assert read_skill_file(skill_with_files, "ref.md") == "reference text"
    assert read_skill_file(skill_with_files, "sub/deep.txt") == "deep"
    assert read_skill_file(skill_with_files, "./sub/deep.txt") == "deep"
    assert read_skill_file(skill_with_files, "alias.md") == "reference text"
    assert "Do the thing." in read_skill_file(skill_with_files, "SKILL.md")


@pytest.mark.parametrize(
    ("relpath", "needle"),
    [
        ("../../etc/passwd", "`..`"),
        ("sub/../../outside.txt", "`..`"),
        ("..\\outside.txt", "`..`"),
        ("/etc/passwd", "absolute"),
        ("C:/Windows/win.ini", "absolute"),
        ("escape", "outside the folder"),
        ("escape-dir/outside.txt", "outside the folder"),
        ("", "give `file_path`"),
        ("nope.md", "has no file"),
        ("sub", "is a folder"),
    ],
)
def test_read_file_refusals(skill_with_files: Skill, relpath: str, needle: str) -> None:
    with pytest.raises(RepairableError) as info:
        read_skill_file(skill_with_files, relpath)
    assert needle in str(info.value)
    assert "secret" not in str(info.value)


def test_missing_file_lists_what_exists(skill_with_files: Skill) -> None:
    with pytest.raises(RepairableError) as info:
        read_skill_file(skill_with_files, "refs.md")
    assert "ref.md" in str(info.value)


def test_binary_file_gives_a_note(skill_with_files: Skill) -> None:
    out = read_skill_file(skill_with_files, "logo.png")
    assert "binary" in out and "PNG" not in out


def test_non_utf8_file_gives_a_note(skill_with_files: Skill) -> None:
    (skill_with_files.folder / "latin.txt").write_bytes(b"caf\xe9 au lait")
    assert "not UTF-8" in read_skill_file(skill_with_files, "latin.txt")


def test_long_file_is_cut(skill_with_files: Skill) -> None:
    (skill_with_files.folder / "long.txt").write_text("é" * 50_000)
    out = read_skill_file(skill_with_files, "long.txt", max_chars=1000)
    assert out.startswith("é" * 1000) and "cut at 1000 characters" in out
    assert len(out) < 1100


def test_multibyte_text_exactly_at_the_limit(skill_with_files: Skill) -> None:
    (skill_with_files.folder / "exact.txt").write_text("é" * 100)
    assert read_skill_file(skill_with_files, "exact.txt", max_chars=100) == "é" * 100
