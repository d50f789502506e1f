"""Tests for a0nb.files.file_tree: ordering, caps, ignore patterns, bounded walks, unreadable folders."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from a0nb.files.file_tree import clean_ignore_list, file_tree


def touch(path: Path, mtime: float | None = None, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def body(tree: str) -> list[str]:
    """The tree's lines without the root line."""
    return tree.splitlines()[1:]


# ---------------------------------------------------------------- ignore-list cleanup (§8.3 item 24)


def test_clean_ignore_list_acceptance() -> None:
    assert clean_ignore_list("a # c\n\n#x\n b ") == "a\nb"


def test_clean_ignore_list_empty_means_nothing_ignored() -> None:
    assert clean_ignore_list("") == "nothing ignored"
    assert clean_ignore_list("# only a comment\n\n   \n") == "nothing ignored"


# ---------------------------------------------------------------- shape and ordering


def test_root_line_and_indentation(tmp_path: Path) -> None:
    touch(tmp_path / "sub" / "inner.txt")
    touch(tmp_path / "top.txt")
    lines = file_tree(tmp_path).splitlines()
    assert lines[0] == str(tmp_path) + "/"
    assert lines[1:] == ["  sub/", "    inner.txt", "  top.txt"]


def test_folders_come_before_files(tmp_path: Path) -> None:
    touch(tmp_path / "a.txt", mtime=3000)
    touch(tmp_path / "zdir" / "x", mtime=1000)
    os.utime(tmp_path / "zdir", (1000, 1000))
    assert body(file_tree(tmp_path, max_depth=1)) == ["  zdir/", "  a.txt"]


def test_newest_first_within_a_folder(tmp_path: Path) -> None:
    touch(tmp_path / "old.txt", mtime=1000)
    touch(tmp_path / "new.txt", mtime=3000)
    touch(tmp_path / "mid.txt", mtime=2000)
    assert body(file_tree(tmp_path)) == ["  new.txt", "  mid.txt", "  old.txt"]


def test_equal_mtimes_fall_back_to_name(tmp_path: Path) -> None:
    for name in ("c", "a", "b"):
        touch(tmp_path / name, mtime=1000)
    assert body(file_tree(tmp_path)) == ["  a", "  b", "  c"]


def test_breadth_first_shallow_entries_win_the_line_budget(tmp_path: Path) -> None:
    for i in range(5):
        touch(tmp_path / f"d{i}" / "deep" / "file.txt")
    tree = file_tree(tmp_path, max_lines=7)
    lines = tree.splitlines()
    assert len(lines) == 7
    # all five top-level folders got lines; the one line left went to the cut note
    assert sorted(lines[1:6]) == [f"  d{i}/" for i in range(5)]
    assert lines[-1].startswith("# more not shown")


def test_empty_folder_is_only_the_root_line(tmp_path: Path) -> None:
    assert file_tree(tmp_path) == str(tmp_path) + "/"


def test_missing_root_does_not_crash(tmp_path: Path) -> None:
    out = file_tree(tmp_path / "nope")
    assert "not a folder" in out


def test_binary_files_are_just_names(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)) * 10)
    assert body(file_tree(tmp_path)) == ["  blob.bin"]


# ---------------------------------------------------------------- caps


def test_per_folder_file_cap_adds_a_comment(tmp_path: Path) -> None:
    for i in range(10):
        touch(tmp_path / f"f{i:02}", mtime=1000 + i)
    lines = body(file_tree(tmp_path, max_files=3))
    assert lines == ["  f09", "  f08", "  f07", "  # 7 more files"]


def test_per_folder_folder_cap_adds_a_comment(tmp_path: Path) -> None:
    for i in range(6):
        (tmp_path / f"d{i}").mkdir()
        os.utime(tmp_path / f"d{i}", (1000 + i, 1000 + i))
    lines = body(file_tree(tmp_path, max_folders=2))
    assert lines == ["  d5/", "  d4/", "  # 4 more folders"]


def test_single_overflow_item_is_shown_instead_of_a_comment(tmp_path: Path) -> None:
    for i in range(4):
        touch(tmp_path / f"f{i}", mtime=1000 + i)
    lines = body(file_tree(tmp_path, max_files=3))
    assert len(lines) == 4 and not any("more" in ln for ln in lines)


def test_folder_comment_comes_between_folders_and_files(tmp_path: Path) -> None:
    for i in range(4):
        (tmp_path / f"d{i}").mkdir()
    touch(tmp_path / "file.txt")
    lines = [ln.strip() for ln in body(file_tree(tmp_path, max_folders=1))]
    assert lines[1] == "# 3 more folders" and lines[2] == "file.txt"


def test_depth_cap(tmp_path: Path) -> None:
    touch(tmp_path / "a" / "b" / "c" / "d.txt")
    assert body(file_tree(tmp_path, max_depth=2)) == ["  a/", "    b/"]
    assert body(file_tree(tmp_path, max_depth=1)) == ["  a/"]
    assert "d.txt" in file_tree(tmp_path, max_depth=4)


def test_global_line_cap_is_never_exceeded(tmp_path: Path) -> None:
    for d in range(10):
        for f in range(10):
            touch(tmp_path / f"d{d}" / f"f{f}")
    for cap in (2, 5, 17, 40):
        tree = file_tree(tmp_path, max_lines=cap)
        assert len(tree.splitlines()) <= cap
        assert tree.splitlines()[-1] == f"# more not shown (limit: {cap} lines)"


def test_exact_fit_is_not_marked_as_cut(tmp_path: Path) -> None:
    for i in range(3):
        touch(tmp_path / f"f{i}")
    tree = file_tree(tmp_path, max_lines=4)
    assert len(tree.splitlines()) == 4 and "more not shown" not in tree


# ---------------------------------------------------------------- ignore patterns and skipped folders


def test_gitignore_patterns(tmp_path: Path) -> None:
    touch(tmp_path / "keep.py")
    touch(tmp_path / "drop.pyc")
    touch(tmp_path / "special.pyc")
    touch(tmp_path / "build" / "out.o")
    touch(tmp_path / "src" / "build" / "deep.o")
    touch(tmp_path / "src" / "main.py")
    touch(tmp_path / "docs" / "build")  # a FILE named build: `build/` only matches folders
    ignore = "# compiled\n*.pyc\n!special.pyc\nbuild/\n"
    tree = file_tree(tmp_path, ignore=ignore)
    names = [ln.strip() for ln in body(tree)]
    assert "keep.py" in names and "special.pyc" in names and "main.py" in names
    assert "drop.pyc" not in names
    assert "build/" not in names and "out.o" not in names and "deep.o" not in names
    assert "build" in names  # the file docs/build


def test_anchored_pattern_only_matches_at_root(tmp_path: Path) -> None:
    touch(tmp_path / "data" / "x.csv")
    touch(tmp_path / "sub" / "data" / "y.csv")
    names = [ln.strip() for ln in body(file_tree(tmp_path, ignore="/data/"))]
    assert "x.csv" not in names and "y.csv" in names


def test_ignored_folder_is_not_walked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path / "node_modules" / "pkg" / "index.js")
    touch(tmp_path / "app.js")
    opened: list[str] = []
    real = os.scandir

    def spy(path):  # type: ignore[no-untyped-def]
        opened.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", spy)
    file_tree(tmp_path, ignore="node_modules/")
    assert not any("node_modules" in p for p in opened)


def test_git_contents_and_checkpoints_are_skipped(tmp_path: Path) -> None:
    touch(tmp_path / ".git" / "HEAD")
    touch(tmp_path / ".ipynb_checkpoints" / "nb-checkpoint.ipynb")
    touch(tmp_path / "sub" / ".ipynb_checkpoints" / "x-checkpoint.ipynb")
    touch(tmp_path / ".env")
    names = [ln.strip() for ln in body(file_tree(tmp_path))]
    assert ".git/" in names and "HEAD" not in names
    assert not any("checkpoint" in n for n in names)
    assert ".env" in names  # other hidden files follow the ignore patterns only
    assert ".env" not in file_tree(tmp_path, ignore=".*\n!.git/")


def test_linked_folder_is_shown_but_not_followed(tmp_path: Path) -> None:
    touch(tmp_path / "real" / "f.txt")
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    names = [ln.strip() for ln in body(file_tree(tmp_path, max_depth=10))]
    assert "loop/" in names and names.count("f.txt") == 1


# ---------------------------------------------------------------- bounded walks


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="needs a non-root POSIX user")
def test_unreadable_folder(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    touch(locked / "secret.txt")
    touch(tmp_path / "open.txt")
    locked.chmod(0)
    try:
        lines = [ln.strip() for ln in body(file_tree(tmp_path))]
    finally:
        locked.chmod(0o755)
    assert "locked/" in lines and "# unreadable" in lines and "open.txt" in lines
    assert "secret.txt" not in lines


def test_unreadable_folder_via_scandir_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path / "locked" / "secret.txt")
    real = os.scandir

    def refuse(path):  # type: ignore[no-untyped-def]
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", refuse)
    assert body(file_tree(tmp_path)) == ["  locked/", "    # unreadable"]


def test_huge_folder_is_not_scanned_to_the_end(tmp_path: Path) -> None:
    for i in range(300):
        (tmp_path / f"f{i:03}").touch()
    lines = [ln.strip() for ln in body(file_tree(tmp_path, max_files=5, max_scan=50))]
    assert lines[-1] == "# more entries not scanned"
    assert lines[-2] == "# 45 more files"


def test_huge_folder_stat_calls_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(2000):
        (tmp_path / f"f{i:04}").touch()
    seen = 0
    real = os.scandir

    class Counting:
        def __init__(self, path):  # type: ignore[no-untyped-def]
            self.inner = real(path)

        def __enter__(self):  # type: ignore[no-untyped-def]
            self.it = self.inner.__enter__()
            return self

        def __exit__(self, *exc):  # type: ignore[no-untyped-def]
            return self.inner.__exit__(*exc)

        def __iter__(self):  # type: ignore[no-untyped-def]
            nonlocal seen
            for entry in self.it:
                seen += 1
                yield entry

    monkeypatch.setattr(os, "scandir", Counting)
    file_tree(tmp_path, max_scan=100)
    assert seen <= 101


def test_total_scan_budget_cuts_the_walk(tmp_path: Path) -> None:
    for d in range(20):
        for f in range(20):
            touch(tmp_path / f"d{d:02}" / f"f{f:02}")
    tree = file_tree(tmp_path, max_files=100, max_folders=100, max_lines=10_000, max_total_scan=100)
    assert tree.splitlines()[-1] == "# more not shown (limit: 100 entries scanned)"
    assert sum(1 for ln in tree.splitlines() if ln.strip().startswith("f")) < 100


def test_twenty_thousand_files_in_bounded_time(tmp_path: Path) -> None:
    # Not a timing assertion: the walk must finish and stay within its line cap.
    for d in range(40):
        sub = tmp_path / f"d{d:02}" / "inner"
        sub.mkdir(parents=True)
        for f in range(100):
            (sub / f"f{f:03}.txt").touch()
    tree = file_tree(tmp_path)
    assert len(tree.splitlines()) <= 250
    assert tree.count("# 80 more files") >= 1
