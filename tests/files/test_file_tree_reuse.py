"""Reuse of a walked tree (a0nb.files.file_tree): the same tree while nothing it read changed, and a new
walk as soon as anything did — a file added, removed, renamed or rewritten (newest first), a folder deep
inside changed, a link's target replaced, a folder's mtime put back by hand — whether the folder was
changed just now (a coarse clock could hide a second change) or long ago; and mid-session, the next
loop step's workdir extra shows the change."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.files import file_tree as file_tree_module
from a0nb.files.file_tree import file_tree
from a0nb.files.prompt_lookup import RACY_NS, racy_ns
from a0nb.testing import answer, tool_reply


def touch(path: Path, mtime: float | None = None, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def age(root: Path, seconds: int = 60) -> None:
    """Every folder under `root` (and itself) looks untouched for a while (files keep their mtimes)."""
    past = time.time() - seconds
    for p in sorted(root.rglob("*"), key=lambda q: -len(q.parts)):
        if p.is_dir() and not p.is_symlink():
            os.utime(p, (past, past))
    os.utime(root, (past, past))


@pytest.fixture(params=["recent", "old"])
def folder(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A small tree, its folders either just changed or long unchanged (both ways of checking a reuse)."""
    root = tmp_path / "nb"
    touch(root / "a.txt", mtime=1000)
    touch(root / "b.txt", mtime=2000)
    touch(root / "src" / "main.py", mtime=3000)
    touch(root / "src" / "deep" / "x.py", mtime=3000)
    if request.param == "old":
        age(root)
    return root


def test_an_unchanged_folder_gives_the_same_tree_without_a_walk(folder: Path) -> None:
    first = file_tree(folder)
    assert file_tree(folder) is first  # the kept tree, not a new walk
    assert file_tree(folder, max_depth=1) != first  # other limits are another tree


def test_a_file_added_is_seen(folder: Path) -> None:
    file_tree(folder)
    touch(folder / "new.txt")
    assert "new.txt" in file_tree(folder)


def test_a_file_removed_is_seen(folder: Path) -> None:
    assert "a.txt" in file_tree(folder)
    (folder / "a.txt").unlink()
    assert "a.txt" not in file_tree(folder)


def test_a_file_renamed_is_seen(folder: Path) -> None:
    file_tree(folder)
    (folder / "a.txt").rename(folder / "renamed.txt")
    tree = file_tree(folder)
    assert "renamed.txt" in tree and "a.txt" not in tree


def test_a_file_rewritten_moves_to_the_top(folder: Path) -> None:
    assert file_tree(folder).index("b.txt") < file_tree(folder).index("a.txt")
    os.utime(folder / "a.txt", (5000, 5000))  # a write changes only the file's mtime, not its folder's
    tree = file_tree(folder)
    assert tree.index("a.txt") < tree.index("b.txt")


def test_a_change_deep_inside_is_seen(folder: Path) -> None:
    file_tree(folder)
    touch(folder / "src" / "deep" / "y.py")
    assert "y.py" in file_tree(folder)
    (folder / "src" / "deep").rename(folder / "src" / "moved")
    tree = file_tree(folder)
    assert "moved/" in tree and "deep/" not in tree


def test_a_folder_whose_mtime_is_put_back_is_still_seen(folder: Path) -> None:
    st = os.stat(folder)
    file_tree(folder)
    touch(folder / "hidden.txt")
    os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns))  # the mtime says nothing changed; the ctime does
    assert "hidden.txt" in file_tree(folder)


def test_a_folder_replaced_by_another_is_seen(folder: Path, tmp_path: Path) -> None:
    file_tree(folder)
    other = tmp_path / "other"
    touch(other / "z.txt")
    st = os.stat(folder)
    folder.rename(tmp_path / "gone")
    other.rename(folder)
    os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns))
    tree = file_tree(folder)
    assert "z.txt" in tree and "a.txt" not in tree
    (tmp_path / "gone").rename(tmp_path / "x")
    folder.rename(tmp_path / "gone2")
    assert file_tree(folder).endswith("# not a folder")


def frozen_stamps(monkeypatch: pytest.MonkeyPatch, stamp_ns: int) -> None:
    """Every folder's mtime and ctime read as `stamp_ns`, as when all changes fall within one clock tick."""
    identity = file_tree_module._identity

    def frozen(path: str) -> tuple[int, int, int, int] | None:
        sig = identity(path)
        return None if sig is None else (sig[0], sig[1], stamp_ns, stamp_ns)

    monkeypatch.setattr(file_tree_module, "_identity", frozen)


def test_racy_window_is_a_tick_where_mtimes_are_fine_and_two_seconds_where_they_are_coarse() -> None:
    assert racy_ns(1_700_000_000_123_456_789) == 50_000_000
    assert racy_ns(1_700_000_000_000_000_000) == racy_ns(1_700_000_000_001_000_000) == RACY_NS


def test_a_coarse_clock_folder_changed_within_its_tick_is_seen(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole-second stamps (FAT, some network file systems): a second change in the same second keeps the
    folder's stamps, so its listing is compared for 2 s."""
    frozen_stamps(monkeypatch, time.time_ns() // 1_000_000_000 * 1_000_000_000)
    file_tree(folder)
    touch(folder / "same_second.txt")
    assert "same_second.txt" in file_tree(folder)


def test_a_fine_clock_folder_is_trusted_by_its_stamps_once_a_tick_passed(folder: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Sub-millisecond stamps: 50 ms after its last change a folder's next change moves its stamps, so its
    listing is no longer read on every reuse (stamps frozen here: the change goes unseen, proving no listing)."""
    frozen_stamps(monkeypatch, time.time_ns() - 100_000_123)
    first = file_tree(folder)
    listings = []
    monkeypatch.setattr(file_tree_module, "_listing", lambda *a: listings.append(a) or (None, False))
    touch(folder / "a.txt", mtime=1000)  # (rewritten with its old mtime: only a listing could tell)
    assert file_tree(folder) is first and listings == []


def test_ignore_patterns_are_part_of_the_key(folder: Path) -> None:
    assert "a.txt" in file_tree(folder)
    assert "a.txt" not in file_tree(folder, ignore="a.txt")
    assert "a.txt" in file_tree(folder)


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_a_link_whose_target_changes_kind_is_seen(folder: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (folder / "link").symlink_to(target)
    age(folder)
    assert "link/" in file_tree(folder)
    target.rmdir()  # the link and its folder are untouched; what it leads to is now a file
    touch(target)
    tree = file_tree(folder)
    assert "link/" not in tree and "  link\n" in tree + "\n"


def test_the_next_step_sees_a_file_written_mid_session(nb: Path) -> None:
    """A tool writes a file between two steps of one turn: the second step's workdir extra lists it."""
    touch(nb / "data.csv", text="a,b\n")
    agent = Agent(nb, model=[tool_reply("write"), answer("done")] * 2)
    armed: list[bool] = []
    agent.register_tool(lambda: (touch(nb / "report.md") if armed else None) and "" or "written", name="write")
    agent.ask("warm up")  # the tree is walked and reused once
    armed.append(True)
    first, second = agent.ask("go").calls

    def tree(call: object) -> str:
        return next(p.text for p in call.parts if p.label == "extras: project_file_structure")  # type: ignore[attr-defined]

    assert "data.csv" in tree(first) and "report.md" not in tree(first)
    assert "report.md" in tree(second)
