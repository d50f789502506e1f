from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from a0nb.diagnostics import Diagnostics
from a0nb.files.projects import DEFAULT_FILE_STRUCTURE, Project, ProjectCache, load_project


@pytest.fixture()
def nb(tmp_path: Path) -> Path:
    folder = tmp_path / "nb"
    folder.mkdir()
    return folder


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_folder_without_a0proj_is_an_empty_project(nb: Path, home: Path) -> None:
    diags = Diagnostics()
    project = load_project(nb, diags, home)
    assert project == Project(nb.resolve())
    assert project.instructions_text() == ""
    assert project.file_structure == DEFAULT_FILE_STRUCTURE
    assert project.file_structure["max_depth"] == 5 and project.file_structure["enabled"] is True
    assert ".a0proj/secrets.env" in project.file_structure["gitignore"]
    assert len(diags) == 0


def test_full_project(nb: Path, home: Path) -> None:
    meta = nb / ".a0proj"
    write(meta / "project.json", json.dumps({
        "title": "Demo", "description": "A demo", "instructions": "Main rules.\n", "git_url": "https://x/y.git",
        "color": "#fff"}))
    write(meta / "instructions" / "b.md", "Second file.")
    write(meta / "instructions" / "a.txt", "First file.\n")
    write(meta / "instructions" / ".hidden.md", "never")
    write(meta / "variables.env", "# the region\nregion=eu\nSIZE='large'\n")
    write(meta / "knowledge" / "doc.md", "x")
    write(meta / "knowledge" / "sub" / "deep.txt", "y")
    write(meta / "knowledge" / ".git" / "config", "z")
    write(meta / "secrets.env", "A=1")
    write(home / "secrets.env", "B=2")
    diags = Diagnostics()
    project = load_project(nb, diags, home)
    assert (project.title, project.description, project.git_url) == ("Demo", "A demo", "https://x/y.git")
    assert [p.name for p, _ in project.instructions] == ["a.txt", "b.md"]
    # Agent Zero glues the main instructions to the first file; we separate them
    assert project.instructions_text() == "Main rules.\n\nFirst file.\n\nSecond file."
    assert dict(project.variables) == {"region": "eu", "SIZE": "large"}
    assert [p.relative_to(meta / "knowledge").as_posix() for p in project.knowledge] == ["doc.md", "sub/deep.txt"]
    assert project.secrets_files == (home / "secrets.env", meta / "secrets.env")
    assert project.meta == meta
    assert len(diags) == 0


def test_instructions_text_with_only_files_or_only_main(nb: Path, home: Path) -> None:
    write(nb / ".a0proj" / "instructions" / "one.md", "\nOne\n")
    assert load_project(nb, Diagnostics(), home).instructions_text() == "One"
    (nb / ".a0proj" / "instructions" / "one.md").unlink()
    write(nb / ".a0proj" / "project.json", '{"instructions": "Main"}')
    assert load_project(nb, Diagnostics(), home).instructions_text() == "Main"


def test_each_part_alone(nb: Path, home: Path) -> None:
    write(nb / ".a0proj" / "variables.env", "X=1")
    project = load_project(nb, Diagnostics(), home)
    assert dict(project.variables) == {"X": "1"}
    assert project.title == "" and project.instructions == () and project.knowledge == ()
    assert project.secrets_files == ()


def test_bad_json_is_a_diagnostic_with_line_and_the_rest_loads(nb: Path, home: Path) -> None:
    meta = nb / ".a0proj"
    path = write(meta / "project.json", '{\n  "title": "x",\n  oops\n}')
    write(meta / "instructions" / "a.md", "still read")
    diags = Diagnostics()
    project = load_project(nb, diags, home)
    assert project.title == "" and project.instructions_text() == "still read"
    (d,) = diags.of("project")
    assert d.severity == "error" and d.path == str(path) and d.line == 3


def test_json_that_is_not_an_object_or_has_wrong_types(nb: Path, home: Path) -> None:
    path = write(nb / ".a0proj" / "project.json", "[1, 2]")
    diags = Diagnostics()
    assert load_project(nb, diags, home).title == ""
    assert "JSON object" in diags.of("project")[0].message
    write(path, '{"title": 5, "description": null}')
    diags = Diagnostics()
    project = load_project(nb, diags, home)
    assert (project.title, project.description) == ("", "")
    assert ['"title"' in d.message for d in diags] == [True]


def test_binary_and_oversized_instruction_files_are_skipped(nb: Path, home: Path) -> None:
    folder = nb / ".a0proj" / "instructions"
    write(folder / "image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    write(folder / "latin1.txt", "caf\xe9".encode("latin-1"))
    write(folder / "big.md", "x" * 1_000_001)
    write(folder / "ok.md", "fine")
    write(folder / "sub" / "nested.md", "ignored")
    diags = Diagnostics()
    project = load_project(nb, diags, home)
    assert [p.name for p, _ in project.instructions] == ["ok.md"]
    by_file = {Path(d.path).name: d for d in diags}
    assert set(by_file) == {"image.png", "latin1.txt", "big.md", "sub"}
    assert "not UTF-8 text" in by_file["image.png"].message
    assert "1 MB" in by_file["big.md"].message
    assert by_file["sub"].severity == "info"


def test_exactly_one_megabyte_is_accepted(nb: Path, home: Path) -> None:
    write(nb / ".a0proj" / "instructions" / "edge.md", "x" * 1_000_000)
    assert len(load_project(nb, Diagnostics(), home).instructions) == 1


def test_variables_bad_line_diagnostic(nb: Path, home: Path) -> None:
    path = write(nb / ".a0proj" / "variables.env", "A=1\nbroken\n")
    diags = Diagnostics()
    assert dict(load_project(nb, diags, home).variables) == {"A": "1"}
    (d,) = diags
    assert d.path == str(path) and d.line == 2


def test_knowledge_listing_is_bounded(nb: Path, home: Path) -> None:
    folder = nb / ".a0proj" / "knowledge"
    folder.mkdir(parents=True)
    for i in range(205):
        (folder / f"f{i:03}.md").write_text("k")
    diags = Diagnostics()
    project = load_project(nb, diags, home)
    assert len(project.knowledge) == 200
    assert project.knowledge[0].name == "f000.md" and project.knowledge[-1].name == "f199.md"
    assert "200" in diags.of("project")[0].message


def test_file_structure_overrides(nb: Path, home: Path) -> None:
    write(nb / ".a0proj" / "project.json", json.dumps({"file_structure": {
        "max_depth": 2, "enabled": False, "gitignore": "# mine\n*.log\n\ndata/\n",
        "max_files": -1, "max_lines": "many", "colour": "red"}}))
    diags = Diagnostics()
    fs = load_project(nb, diags, home).file_structure
    assert fs["max_depth"] == 2 and fs["enabled"] is False
    assert fs["gitignore"] == ("*.log", "data/", ".a0proj/secrets.env")  # the secrets file always stays hidden
    assert fs["max_files"] == 20 and fs["max_lines"] == 250 and fs["max_folders"] == 20
    messages = " ".join(d.message for d in diags)
    assert "max_files" in messages and "max_lines" in messages and "colour" in messages
    with pytest.raises(TypeError):
        fs["max_depth"] = 3  # type: ignore[index]


def test_file_structure_gitignore_as_list_and_bad_shape(nb: Path, home: Path) -> None:
    path = write(nb / ".a0proj" / "project.json", '{"file_structure": {"gitignore": ["a/", ".a0proj/secrets.env"]}}')
    assert load_project(nb, Diagnostics(), home).file_structure["gitignore"] == ("a/", ".a0proj/secrets.env")
    write(path, '{"file_structure": true}')
    diags = Diagnostics()
    assert load_project(nb, diags, home).file_structure == DEFAULT_FILE_STRUCTURE
    assert len(diags) == 1


def test_home_defaults_to_env(nb: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A0NB_HOME", str(home))
    write(home / "secrets.env", "A=1")
    assert load_project(nb, Diagnostics()).secrets_files == (home / "secrets.env",)


# ---------------------------------------------------------------- cache


def test_cache_returns_the_same_project_until_a_file_changes(nb: Path, home: Path) -> None:
    meta = nb / ".a0proj"
    instr = write(meta / "instructions" / "a.md", "one")
    cache = ProjectCache(Diagnostics(), home)
    first = cache.get(nb)
    assert cache.get(nb) is first
    instr.write_text("one, edited")
    second = cache.get(nb)
    assert second is not first and second.instructions_text() == "one, edited"
    assert cache.get(nb) is second


def test_cache_sees_edits_of_same_size(nb: Path, home: Path) -> None:
    path = write(nb / ".a0proj" / "project.json", '{"title": "aaaa"}')
    cache = ProjectCache(Diagnostics(), home)
    assert cache.get(nb).title == "aaaa"
    path.write_text('{"title": "bbbb"}')
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))  # coarse clocks: force a new mtime
    assert cache.get(nb).title == "bbbb"


@pytest.mark.parametrize("change", ["new_instruction", "knowledge_deep", "variables", "secrets", "home_secrets",
                                    "delete_meta"])
def test_cache_invalidation(nb: Path, home: Path, change: str) -> None:
    meta = nb / ".a0proj"
    write(meta / "instructions" / "a.md", "one")
    write(meta / "knowledge" / "sub" / "x.md", "k")
    cache = ProjectCache(Diagnostics(), home)
    before = cache.get(nb)
    if change == "new_instruction":
        write(meta / "instructions" / "b.md", "two")
    elif change == "knowledge_deep":
        write(meta / "knowledge" / "sub" / "y.md", "k")
    elif change == "variables":
        write(meta / "variables.env", "X=1")
    elif change == "secrets":
        write(meta / "secrets.env", "X=1")
    elif change == "home_secrets":
        write(home / "secrets.env", "X=1")
    else:
        for p in sorted(meta.rglob("*"), reverse=True):
            p.rmdir() if p.is_dir() else p.unlink()
        meta.rmdir()
    after = cache.get(nb)
    assert after is not before and after != before


def test_cache_keeps_project_diagnostics_in_step(nb: Path, home: Path) -> None:
    diags = Diagnostics()
    diags.add("warning", "prompt", "someone else's")
    path = write(nb / ".a0proj" / "project.json", "{bad")
    cache = ProjectCache(diags, home)
    cache.get(nb)
    assert len(diags.of("project")) == 1
    diags.clear("project")
    cache.get(nb)  # a hit still reports what the cached load found
    assert len(diags.of("project")) == 1
    path.write_text('{"title": "fixed"}')
    assert cache.get(nb).title == "fixed"
    assert diags.of("project") == [] and len(diags.of("prompt")) == 1


def test_cache_accepts_equivalent_paths(nb: Path, home: Path) -> None:
    cache = ProjectCache(Diagnostics(), home)
    assert cache.get(nb) is cache.get(nb / "." / ".." / nb.name)


def test_cache_follows_the_home_the_environment_names(nb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a home of its own the cache asks the environment at every get: a new A0NB_HOME is read at once."""
    one, two = tmp_path / "one", tmp_path / "two"
    write(one / "secrets.env", "A=1")
    write(two / "secrets.env", "B=1")
    monkeypatch.setenv("A0NB_HOME", str(one))
    cache = ProjectCache(Diagnostics())
    assert cache.get(nb).secrets_files == (one / "secrets.env",)
    assert cache.get(nb).secrets_files == (one / "secrets.env",)
    monkeypatch.setenv("A0NB_HOME", str(two))
    assert cache.get(nb).secrets_files == (two / "secrets.env",)


def test_cache_sees_the_folder_replaced_at_the_same_path(nb: Path, home: Path, tmp_path: Path) -> None:
    write(nb / ".a0proj" / "project.json", '{"title": "first"}')
    cache = ProjectCache(Diagnostics(), home)
    assert cache.get(nb).title == "first" and cache.get(nb).title == "first"
    nb.rename(tmp_path / "old")
    write(nb / ".a0proj" / "project.json", '{"title": "other"}')
    assert cache.get(nb).title == "other"


def test_cache_keeps_the_project_when_only_home_s_other_files_change(nb: Path, home: Path) -> None:
    write(nb / ".a0proj" / "project.json", '{"title": "kept"}')
    cache = ProjectCache(Diagnostics(), home)
    first = cache.get(nb)
    write(home / "traces" / "t.jsonl", "{}")  # home's own folder changes; none of the project's files do
    assert cache.get(nb) is first


def _watch_stats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        seen.append(os.fspath(path))
        return real(path, *args, **kwargs)
    monkeypatch.setattr(os, "stat", stat)
    return seen


def test_a_missing_a0proj_is_not_stat_ed_while_its_old_folder_is_unchanged(nb: Path, home: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    old = time.time_ns() - 10_000_000_000 + 123_457  # long ago, on a clock with sub-millisecond digits
    os.utime(nb, ns=(old, old))
    cache = ProjectCache(Diagnostics(), home)
    first = cache.get(nb)
    assert cache.get(nb) is first and cache.get(nb) is first
    seen = _watch_stats(monkeypatch)
    assert cache.get(nb) is first
    assert str(nb.resolve() / ".a0proj") not in seen and os.fspath(nb) in seen  # (the folder's own stat vouches)
    write(nb / ".a0proj" / "project.json", '{"title": "new"}')  # (adding .a0proj/ changes the folder's mtime)
    assert cache.get(nb).title == "new"
    assert str(nb.resolve() / ".a0proj") in seen


@pytest.mark.parametrize("when", ["future", "coarse"])
def test_a_folder_changed_within_its_clock_s_reach_is_looked_into(nb: Path, home: Path, when: str) -> None:
    """A folder whose mtime is recent (within a tick, or 2 s on a clock with whole seconds) may change again
    without a new mtime: its .a0proj/ is stat'ed at each check."""
    now = time.time_ns()
    stamp = now + 10_000_000_000 + 123_457 if when == "future" else (now // 1_000_000_000 - 1) * 1_000_000_000
    os.utime(nb, ns=(stamp, stamp))
    cache = ProjectCache(Diagnostics(), home)
    assert cache.get(nb).title == "" and cache.get(nb).title == "" and cache.get(nb).title == ""
    write(nb / ".a0proj" / "project.json", '{"title": "same tick"}')
    os.utime(nb, ns=(stamp, stamp))  # the change left the folder's mtime as it was
    assert cache.get(nb).title == "same tick"
