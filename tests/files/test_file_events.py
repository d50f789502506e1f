"""File events (a0nb.files.file_events): a Quiet taken before a full check stands until anything changes in its
folders (a file written, added, removed, renamed, its mode changed; reads do not count), for MAX_AGE at most;
a lost event queue, a removed watch, a fork or A0NB_FILE_EVENTS=0 make the callers look at the files again.
And the per-step checks built on it (the hierarchy, the project, the secret set, the workdir tree) make no
stat while their folders are quiet, and see a change at the next step."""
from __future__ import annotations

import multiprocessing
import os
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from a0nb import Agent
from a0nb.files import file_events
from a0nb.files.file_events import FileEvents, containing_folders, quiet_for
from a0nb.files.file_tree import file_tree
from a0nb.files.hierarchy import Hierarchy
from a0nb.testing import answer, tool_reply

pytestmark = pytest.mark.skipif(file_events.shared() is None, reason="no inotify here (not Linux)")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "watched"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("a")
    return root


def _append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


CHANGES: dict[str, Callable[[Path], Any]] = {
    "write": lambda d: (d / "a.txt").write_text("b"),
    "append": lambda d: _append(d / "a.txt", "more"),
    "create": lambda d: (d / "new.txt").write_text("n"),
    "mkdir": lambda d: (d / "newdir").mkdir(),
    "remove": lambda d: (d / "a.txt").unlink(),
    "rename": lambda d: (d / "a.txt").rename(d / "b.txt"),
    "chmod": lambda d: os.chmod(d / "a.txt", 0o600),
    "touch": lambda d: os.utime(d / "a.txt", (1, 1)),
    "touch the folder": lambda d: os.utime(d, (1, 1)),
    "folder removed": lambda d: [p.unlink() for p in d.iterdir() if p.is_file()] and [p.rmdir() for p in d.iterdir()]
    and d.rmdir(),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_quiet_holds_until_its_folder_changes(folder: Path, change: str) -> None:
    q = quiet_for([str(folder)])
    assert q is not None and q.quiet() and q.quiet()
    CHANGES[change](folder)
    assert not q.quiet()
    assert not q.quiet()  # (and stays broken)


def test_reading_listing_and_stating_leave_a_quiet_standing(folder: Path) -> None:
    q = quiet_for([str(folder)])
    assert q is not None
    (folder / "a.txt").read_text()
    list(folder.iterdir())
    os.stat(folder / "a.txt")
    assert q.quiet()


def test_changes_elsewhere_leave_a_quiet_standing(folder: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    mine, theirs = quiet_for([str(folder)]), quiet_for([str(other)])
    assert mine is not None and theirs is not None
    (other / "x.txt").write_text("x")
    (folder / "sub" / "deep.txt").write_text("a folder below is a folder of its own: not watched by this Quiet")
    assert mine.quiet() and not theirs.quiet()


def test_a_missing_folder_gives_no_quiet(tmp_path: Path) -> None:
    assert quiet_for([str(tmp_path / "missing")]) is None
    assert quiet_for([str(tmp_path), str(tmp_path / "missing")]) is None
    (tmp_path / "file.txt").write_text("x")
    assert quiet_for([str(tmp_path / "file.txt")]) is None  # a file is not a folder


def test_the_folders_a_missing_path_would_appear_in(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    paths = [str(tmp_path / "a" / "x.env"), str(tmp_path / "b" / "c" / "y.env"), str(tmp_path / "a" / "z")]
    assert containing_folders(paths) == [str(tmp_path / "a"), str(tmp_path)]


def test_the_folders_within_a_path(tmp_path: Path) -> None:
    (tmp_path / "k" / "a" / "b").mkdir(parents=True)
    (tmp_path / "k" / ".hidden").mkdir()
    k = str(tmp_path / "k")
    assert set(file_events.folders_within(k)) == {k, f"{k}/a", f"{k}/a/b", f"{k}/.hidden"}
    assert set(file_events.folders_within(k, hidden=False)) == {k, f"{k}/a", f"{k}/a/b"}
    assert file_events.folders_within(str(tmp_path / "missing" / "deeper")) == [str(tmp_path)]


def test_a_quiet_lasts_max_age_at_most(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_events, "MAX_AGE", 0.05)
    q = quiet_for([str(folder)])
    assert q is not None and q.quiet()
    time.sleep(0.1)
    assert not q.quiet()  # (a change no event reports, on a network folder, is seen then)


# -- the queue itself, fed by hand: an overflow and a removed watch ------------------------------------------

class _Pipe:
    """Stands in for the inotify descriptor: events are written into a pipe as the kernel would queue them."""

    def __init__(self) -> None:
        self.r, self.w = os.pipe()
        os.set_blocking(self.r, False)
        self.added: list[str] = []

    def fileno(self) -> int:
        return self.r

    def add_watch(self, path: str, mask: int) -> int:
        self.added.append(path)
        return len(self.added)

    def close(self) -> None:
        os.close(self.r)
        os.close(self.w)

    def event(self, wd: int, mask: int, name: bytes = b"") -> None:
        padded = name + b"\0" * (16 - len(name) % 16) if name else b""
        os.write(self.w, struct.pack("iIII", wd, mask, 0, len(padded)) + padded)


@pytest.fixture
def fed() -> Iterator[tuple[FileEvents, _Pipe]]:
    pipe = _Pipe()
    feed = FileEvents(pipe)
    yield feed, pipe
    feed.close()


def test_events_are_read_by_folder(fed: tuple[FileEvents, _Pipe]) -> None:
    feed, pipe = fed
    a, b = feed.watch(["/a"]), feed.watch(["/b"])
    assert a is not None and b is not None and pipe.added == ["/a", "/b"]
    assert feed.watch(["/a"]) is not None and pipe.added == ["/a", "/b"]  # a folder is watched once
    pipe.event(2, 0x2, b"file.txt")  # IN_MODIFY in /b
    assert a.quiet() and not b.quiet()


def test_a_lost_queue_voids_every_older_quiet(fed: tuple[FileEvents, _Pipe]) -> None:
    feed, pipe = fed
    old = feed.watch(["/a"])
    pipe.event(-1, 0x4000)  # IN_Q_OVERFLOW: events were dropped, which folders they were for is unknown
    assert old is not None and not old.quiet()
    new = feed.watch(["/a"])
    assert new is not None and new.quiet()


def test_a_removed_watch_voids_its_quiets_and_is_watched_again(fed: tuple[FileEvents, _Pipe]) -> None:
    feed, pipe = fed
    old = feed.watch(["/a"])
    pipe.event(1, 0x400)  # IN_DELETE_SELF
    pipe.event(1, 0x8000)  # IN_IGNORED: the watch is gone
    assert old is not None and not old.quiet()
    assert feed.watch(["/a"]) is not None and pipe.added == ["/a", "/a"]


def test_what_it_remembers_is_bounded(fed: tuple[FileEvents, _Pipe], monkeypatch: pytest.MonkeyPatch) -> None:
    feed, pipe = fed
    monkeypatch.setattr(file_events, "_KEPT_LAST", 2)
    a, b, c = feed.watch(["/a"]), feed.watch(["/b"]), feed.watch(["/c"])
    pipe.event(1, 0x2, b"x")
    pipe.event(2, 0x2, b"x")
    assert a is not None and b is not None and c is not None and c.quiet()
    pipe.event(3, 0x2, b"x")  # a third folder's event: what the first two had is forgotten, so older Quiets are void
    assert not a.quiet() and not b.quiet() and not c.quiet()
    assert feed.watch(["/a"]).quiet()  # type: ignore[union-attr]


def test_watches_are_bounded(fed: tuple[FileEvents, _Pipe], monkeypatch: pytest.MonkeyPatch) -> None:
    feed, pipe = fed
    monkeypatch.setattr(file_events, "MAX_WATCHES", 2)
    assert feed.watch(["/a", "/b"]) is not None
    assert feed.watch(["/a", "/c"]) is None  # (the caller stats instead)
    assert feed.watch(["/b"]) is not None and pipe.added == ["/a", "/b"]


def test_a_descriptor_at_its_end_is_read_once(fed: tuple[FileEvents, _Pipe]) -> None:
    feed, pipe = fed
    q = feed.watch(["/a"])
    os.close(pipe.w)  # (a read now returns nothing at all, not "try again")
    pipe.w = os.open(os.devnull, os.O_WRONLY)  # (for the fixture's close)
    assert q is not None and q.quiet()


def test_a_closed_feed_vouches_for_nothing(fed: tuple[FileEvents, _Pipe]) -> None:
    feed, _ = fed
    q = feed.watch(["/a"])
    feed.close()
    assert q is not None and not q.quiet() and feed.watch(["/a"]) is None


def _in_child(conn: Any, parent_feed_id: int, folder: str) -> None:
    feed = file_events.shared()
    conn.send((feed is not None and id(feed) != parent_feed_id, quiet_for([folder]) is not None))


def test_a_forked_child_reads_a_queue_of_its_own(folder: Path) -> None:
    feed = file_events.shared()
    assert feed is not None
    q = quiet_for([str(folder)])
    ctx = multiprocessing.get_context("fork")
    here, there = ctx.Pipe()
    child = ctx.Process(target=_in_child, args=(there, id(feed), str(folder)))
    child.start()
    assert here.recv() == (True, True)
    child.join(10)
    assert q is not None and q.quiet()  # the parent's queue is untouched


def test_A0NB_FILE_EVENTS_0_turns_them_off() -> None:
    code = "from a0nb.files import file_events; print(file_events.shared() is None)"
    for value, off in (("0", "True"), ("1", "False")):
        out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "A0NB_FILE_EVENTS": value},
                             capture_output=True, text=True, check=True)
        assert out.stdout.strip() == off


# -- the per-step checks built on it ---------------------------------------------------------------------

class _Stats:
    """Counts stat, lstat and access calls on paths under `roots`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, roots: list[Path]) -> None:
        self.roots = tuple(str(r) for r in roots)
        self.seen: list[str] = []
        for name in ("stat", "lstat", "access"):
            real = getattr(os, name)
            monkeypatch.setattr(os, name, self._counting(real))

    def _counting(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(path: Any, *args: Any, **kwargs: Any) -> Any:
            text = os.fspath(path) if not isinstance(path, int) else ""
            if isinstance(text, str) and text.startswith(self.roots):
                self.seen.append(text)
            return real(path, *args, **kwargs)
        return call


def test_the_hierarchy_check_makes_no_stat_while_quiet_and_sees_a_change(tmp_path: Path, file_events_on: bool,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    nb, home = tmp_path / "nb", tmp_path / "home"
    (nb / "tools").mkdir(parents=True)
    home.mkdir()
    (nb / "tools" / "mine.py").write_text("x = 1\n")
    h = Hierarchy(nb, home=home)
    assert not h.refresh() and not h.refresh()  # (the second check keeps a Quiet)
    stats = _Stats(monkeypatch, [nb, home])
    assert not h.refresh()
    assert (stats.seen == []) == file_events_on
    (nb / "tools" / "mine.py").write_text("x = 22\n")  # edited in place
    assert h.refresh()
    assert not h.refresh() and not h.refresh()
    (nb / "tools" / "other.py").write_text("y = 1\n")
    assert h.refresh()


def test_the_workdir_tree_makes_no_stat_while_quiet_and_sees_changes_in_every_folder(
        tmp_path: Path, file_events_on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "nb"
    (root / "src").mkdir(parents=True)
    (root / "node_modules" / "pkg").mkdir(parents=True)  # listed, never opened
    (root / "src" / "main.py").write_text("print(1)\n")
    first = file_tree(root)
    assert file_tree(root) is first and file_tree(root) is first
    stats = _Stats(monkeypatch, [root])
    assert file_tree(root) is first
    assert (stats.seen == []) == file_events_on
    (root / "src" / "new.py").write_text("x")
    second = file_tree(root)
    assert "new.py" in second
    assert file_tree(root) is second and file_tree(root) is second
    time.sleep(0.01)
    (root / "node_modules" / "late.js").write_text("x")  # moves node_modules' mtime: the order can change
    third = file_tree(root)
    assert third is not second


def test_a_turn_s_steps_make_no_stat_of_the_notebook_folder_while_it_is_quiet(
        tmp_path: Path, file_events_on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hierarchy, project, secret set and workdir tree together: after the first steps, a step stats nothing
    in the notebook folder (with file events); a secret written by a tool is masked from the next step."""
    nb, home = tmp_path / "nb", tmp_path / "home"
    nb.mkdir()
    home.mkdir()
    monkeypatch.setenv("A0NB_HOME", str(home))
    for i in range(5):
        (nb / f"data{i}.csv").write_text("1,2\n")
    per_step: list[int] = []
    stats = _Stats(monkeypatch, [nb, home])

    def step() -> None:
        per_step.append(len(stats.seen))

    def write_secret() -> str:
        (nb / ".env").write_text("ACME_TOKEN=tok-Quiet-9931zz\n", encoding="utf-8")
        return "wrote it"

    replies = [tool_reply("noop", i=-1), answer("warm")]  # (a0nb makes its own folders, $A0NB_HOME/cache, once)
    replies += [tool_reply("noop", i=i) for i in range(6)] + [tool_reply("write"), tool_reply("noop", i=9),
                                                              answer("the token is tok-Quiet-9931zz")]
    agent = Agent(nb, model=replies)
    agent.register_tool(lambda i=0: "ok", name="noop")
    agent.register_tool(write_secret, name="write")
    agent.ask("warm up")
    agent.register_extension("chat_model_call_before", step, name="count")
    turn = agent.ask("go")
    quiet_steps = [b - a for a, b in zip(per_step[2:6], per_step[3:7])]
    assert (quiet_steps == [0, 0, 0, 0]) == file_events_on, (quiet_steps, stats.seen[per_step[2]:per_step[6]])
    assert "tok-Quiet-9931zz" not in turn.text and "ACME_TOKEN" in turn.text
    assert "tok-Quiet-9931zz" not in agent.calls[-1].response


def test_a_project_s_files_written_by_a_tool_are_seen_while_the_rest_is_quiet(
        tmp_path: Path, file_events_on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """With .a0proj/ and its instructions/ and knowledge/ folders there, a project.json and a secret a tool writes
    into .a0proj/ (a folder of its own, watched beside them) are seen from the next step on."""
    nb, home = tmp_path / "nb", tmp_path / "home"
    for sub in ("instructions", "knowledge/docs"):
        (nb / ".a0proj" / sub).mkdir(parents=True)
    (nb / ".a0proj" / "instructions" / "style.md").write_text("Be brief.\n")
    home.mkdir()
    monkeypatch.setenv("A0NB_HOME", str(home))

    def write_secret() -> str:
        (nb / ".a0proj" / "secrets.env").write_text("ACME_PASS=tok-Proj-7710kk\n", encoding="utf-8")
        return "wrote it"

    def retitle() -> str:
        (nb / ".a0proj" / "project.json").write_text('{"title": "Renamed mid-turn"}', encoding="utf-8")
        return "renamed"

    titles: list[str] = []
    agent = Agent(nb, model=[tool_reply("noop", i=-1), answer("warm"), tool_reply("noop", i=1), tool_reply("noop", i=2),
                             tool_reply("retitle"), tool_reply("write"), answer("the password is tok-Proj-7710kk")])
    agent.register_tool(lambda i=0: "ok", name="noop")
    agent.register_tool(write_secret, name="write")
    agent.register_tool(retitle, name="retitle")
    agent.ask("warm up")
    agent.register_extension("chat_model_call_before", lambda: titles.append(agent.project.title), name="titles")
    turn = agent.ask("go")
    assert titles[-2:] == ["Renamed mid-turn"] * 2, titles  # (project.json, in .a0proj/ itself: seen at the next step)
    assert "tok-Proj-7710kk" not in turn.text and "§§secret(ACME_PASS)" in turn.text
    assert "tok-Proj-7710kk" not in agent.calls[-1].response
