"""The live search hierarchy of one agent: the roots for its notebook folder and profile, the
enabled plugins, and a cheap change check so files edited next to the notebook apply on the next step."""
from __future__ import annotations

import os
import time
import weakref
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from a0nb.diagnostics import Diagnostics
from a0nb.files.file_events import Quiet, containing_folders, quiet_for
from a0nb.files.roots import Root, search_roots
from a0nb.files.prompt_lookup import racy_ns
from a0nb.files.trust_scan import report as report_untrusted
from a0nb.files.plugins import Plugin, discover_plugins, enabled_plugin_dirs, toggle_dirs
from a0nb.folder_trust import remembered_file
from a0nb.resources import bundled_root, environ_generation, user_home

T = TypeVar("T")

_EXT_SPELLINGS = (("extensions",), ("extensions", "python"))
_WATCHED = ("", "tools", "prompts", "agents", "plugins", "skills", ".a0proj", "providers", "features",
            "extensions", "extensions/python")


class Hierarchy:
    """Roots + plugins for (workdir, profile); memoizes lookups until `refresh()` sees a change."""

    def __init__(self, workdir: Path | str, profile: str = "default", *, home: Path | None = None,
                 bundled: Path | None = None, diagnostics: Diagnostics | None = None,
                 entry_points: bool = True) -> None:
        self.workdir = Path(workdir).resolve()
        self.profile = profile
        self.home = (home or user_home()).expanduser()
        self.bundled = bundled or bundled_root()
        self.diagnostics = diagnostics if diagnostics is not None else Diagnostics()
        self.entry_points = entry_points
        self.generation = 0
        self._signature: tuple[object, ...] | None = None
        self._watch: list[str] | None = None
        # the per-step check (_unchanged): the watched paths to stat, each with its stat at the last take, and when
        # the missing paths kept in it only because their folder was young may be dropped
        self._probe: list[tuple[str, object]] = []
        self._replan_at: int | None = None
        # the folders whose file events stand for the plan's stats (each probed folder, the folder of each
        # probed file or missing path), and the Quiet taken before the last check that passed
        self._folders: list[str] = []
        self._quiet: Quiet | None = None
        self._trust_seen = -1  # the environment's generation when A0NB_TRUST last matched the signature
        self._memo: dict[object, object] = {}
        self._listeners: list[weakref.WeakMethod[Callable[[], None]]] = []
        self.plugins: list[Plugin] = []
        self.roots: list[Root] = []
        self.untrusted = ""  # the message listing what untrusted folders hold (empty: nothing)
        self.refresh()

    # -- change detection -------------------------------------------------------------------
    def set_profile(self, profile: str) -> None:
        if profile != self.profile:
            self.profile = profile
            self._signature = self._watch = None
            self.refresh()

    def refresh(self) -> bool:
        """Stat the watched folders (and user .py files); rebuild when anything changed."""
        if self._watch is not None and self._unchanged():
            return False
        sig = self._compute_signature()
        if sig == self._signature:
            return False
        self.diagnostics.clear("plugin")
        self.plugins = discover_plugins(self.workdir, self.home, self.bundled, self.diagnostics,
                                        entry_points=self.entry_points)
        plugin_dirs = enabled_plugin_dirs(self.plugins, self.workdir, self.home, self.profile)
        self.roots = search_roots(self.workdir, self.profile, home=self.home, plugin_dirs=plugin_dirs,
                                  bundled=self.bundled)
        self._memo.clear()
        self.untrusted = report_untrusted(self.roots, self.workdir, self.diagnostics, self.untrusted)
        self.generation += 1
        for ref in self._listeners:
            listener = ref()
            if listener is not None:
                listener()
        # roots may have changed (a plugin appeared), so the watch list and signature are taken anew
        self._watch = None
        self._signature = self._compute_signature()
        return True

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call the bound method `listener` after every rebuild (held weakly: it does not keep its object alive)."""
        self._listeners = [r for r in self._listeners if r() is not None] + [weakref.WeakMethod(listener)]

    def _watch_roots(self) -> list[tuple[Path, bool]]:
        """(folder, watch .py files too) — bundled files are part of the install and only their folders are watched."""
        if not self.roots:
            base = [self.workdir, self.workdir / ".a0proj", self.home]
            return [(p, True) for p in base]
        # The bundled defaults, bundled plugins included, are part of the installation: only user-owned roots
        # are watched.
        shipped = self._shipped_plugin_dirs()
        return [(r.path, True) for r in self.roots if r.kind not in ("bundled", "bundled-profile")
                and not (r.plugin and (r.path in shipped or r.path.parent.parent in shipped))] + [
            (self.home / "plugins", False), (self.workdir / "plugins", False)]

    def _shipped_plugin_dirs(self) -> set[Path]:
        return {p.path for p in self.plugins if p.source == "bundled"}

    def _compute_signature(self) -> tuple[object, ...]:
        """(profile, A0NB_TRUST, the stat of every watched path); plans the per-step check from it."""
        if self._watch is None:
            self._watch = self._watch_list()
        now = time.time_ns()
        sig: list[object] = [self.profile, os.environ.get("A0NB_TRUST")]  # trusting a folder changes what loads
        stat = os.stat
        for path in self._watch:
            try:
                st = stat(path)
            except OSError:
                sig.append(None)
                continue
            sig.append((st.st_mtime_ns, st.st_size))
        self._plan(sig[2:], now)
        return tuple(sig)

    def _plan(self, seen: list[object], now: int) -> None:
        """Choose what each step stats. A folder's mtime changes when an entry is added, removed or renamed, and
        every change to the set of paths rebuilds the list, so a step costs stats only (no directory scans).
        A path missing in a watched folder whose mtime is old (outside the clock's reach, `_racy`) is left out:
        its appearance changes that folder's mtime; so is a path below a missing watched folder.
        A step passes only when every planned stat is unchanged, which vouches for the left-out paths."""
        assert self._watch is not None
        index = {p: i for i, p in enumerate(self._watch)}
        probe, young = [], []
        for path, was in zip(self._watch, seen):
            if was is None:
                up, direct = _watched_above(path, index, seen)
                if up is _MISSING:
                    continue
                if direct and isinstance(up, tuple):
                    old_at = up[0] + racy_ns(up[0])
                    if now > old_at:
                        continue
                    young.append(old_at)
            probe.append((path, was))
        self._probe = probe
        self._replan_at = min(young) if young else None
        isdir = os.path.isdir
        self._folders = list(dict.fromkeys([p for p, _ in probe if isdir(p)]
                                           + containing_folders([p for p, _ in probe if not isdir(p)])))
        self._quiet = None

    def _unchanged(self) -> bool:
        """The per-step check: no file event in the plan's folders since the last check passed, else one stat
        per path in the plan, stopping at the first change."""
        generation = environ_generation()  # (one call, not four, while the environment is unchanged)
        if generation != self._trust_seen:
            if os.environ.get("A0NB_TRUST") != self._signature[1]:  # type: ignore[index]
                return False
            self._trust_seen = generation
        quiet, self._quiet = self._quiet, None
        if quiet is not None and quiet.quiet():
            self._quiet = quiet
            return True
        quiet = quiet_for(self._folders)  # (before the stats: a change during them is an event after it)
        now = time.time_ns() if self._replan_at is not None else 0  # (before the stats: see _plan)
        stat = os.stat
        for path, was in self._probe:
            try:
                st = stat(path)
            except OSError:
                if was is not None:
                    return False
                continue
            if was != (st.st_mtime_ns, st.st_size):
                return False
        if self._replan_at is not None and now > self._replan_at:  # young folders grew old: fewer stats from now
            self._plan(list(self._signature[2:]), now)  # type: ignore[index]
        else:
            self._quiet = quiet
        return True

    def _watch_list(self) -> list[str]:
        """Every path whose stat is part of the signature: each watched root and its known sub-folders, the
        extension trees, user tool files, and each plugin's scoped switch folders and config.json."""
        out: list[str] = [str(remembered_file(self.home))]  # `a0nb.trust()` changes what may load
        for root, with_files in self._watch_roots():
            out.append(str(root))
            if not root.is_dir():  # a missing root: its appearance changes its own stat, then the list is rebuilt
                continue
            for sub in _WATCHED[1:]:
                d = root / sub if sub else root
                if not d.is_dir():
                    out.append(str(d))  # appears later: seen by its stat, and by its parent's mtime
                    continue
                out.append(str(d))
                if sub in ("extensions", "extensions/python"):
                    self._list_tree(d, out, with_files, depth=0)
                elif sub == "prompts" and with_files:  # edited in place: seen next step (the agent's prompt
                    self._list_tree(d, out, with_files, depth=0, suffix="")  # caches trust this watch)
                elif sub in ("tools", "providers", "features") and with_files:  # edited in place: seen next step
                    out += [e.path for e in _scan(d) if e.name.endswith(".py")]
        shipped = self._shipped_plugin_dirs()
        for plugin in self.plugins:  # a `.toggle-0/1` appearing changes its folder's mtime
            for d in toggle_dirs(plugin, self.workdir, self.home, self.profile):
                if d not in shipped:  # (a bundled plugin's own folder is part of the installation)
                    out += [str(d), str(d / "config.json")]
        return list(dict.fromkeys(out))  # a path reached twice (the notebook's plugins/ folder) is stat'ed once

    def _list_tree(self, d: Path, out: list[str], with_files: bool, depth: int, suffix: str = ".py") -> None:
        for e in _scan(d):
            if e.is_dir(follow_symlinks=False) and depth < 8 and e.name != "__pycache__":
                out.append(e.path)
                if e.name != "python" or depth > 0:
                    self._list_tree(Path(e.path), out, with_files, depth + 1, suffix)
            elif with_files and e.name.endswith(suffix):
                out.append(e.path)

    # -- lookups ----------------------------------------------------------------------------
    def memo(self, key: object, build: Callable[[], T]) -> T:
        """Cache `build()` until the hierarchy changes."""
        try:
            return self._memo[key]  # type: ignore[return-value]
        except KeyError:
            value = self._memo[key] = build()
            return value

    def dirs(self, *parts: str) -> list[tuple[Root, Path]]:
        """Every existing `root/parts` folder, priority order."""
        def build() -> list[tuple[Root, Path]]:
            return [(r, r.path.joinpath(*parts)) for r in self.roots if r.path.joinpath(*parts).is_dir()]
        return self.memo(("dirs", parts), build)

    def files(self, *parts: str) -> list[tuple[Root, Path]]:
        """Every copy of the file `root/parts`, priority order (first = the winner)."""
        def build() -> list[tuple[Root, Path]]:
            return [(r, r.path.joinpath(*parts)) for r in self.roots if r.path.joinpath(*parts).is_file()]
        return self.memo(("files", parts), build)

    def extension_dirs(self, point: str) -> list[tuple[Root, Path]]:
        """`extensions/<point>/` and Agent Zero's `extensions/python/<point>/` in every root."""
        return self.memo(("ext-index",), self._index_extensions).get(point) or []

    def _index_extensions(self) -> dict[str, list[tuple[Root, Path]]]:
        """Every folder below each root's `extensions/` and `extensions/python/`, under the point name it serves
        (its path below that folder), in priority order: one scan per generation, not two checks per root
        and point."""
        index: dict[str, list[tuple[Root, Path]]] = {}
        for r in self.roots:
            for spelling in _EXT_SPELLINGS:
                _index_tree(r, r.path.joinpath(*spelling), "", index, 0)
        return index

    def point_folders(self) -> list[tuple[Root, Path, str]]:
        """Every extension folder on disk with the point name it claims (for validation and listing)."""
        def build() -> list[tuple[Root, Path, str]]:
            out = []
            for r in self.roots:
                for spelling in _EXT_SPELLINGS:
                    base = r.path.joinpath(*spelling)
                    if not base.is_dir():
                        continue
                    for d in sorted(base.iterdir()):
                        if not d.is_dir() or d.name in ("python", "__pycache__") or d.name.startswith("."):
                            continue
                        if d.name == "_functions":
                            out += [(r, leaf, str(leaf.relative_to(base)))
                                    for leaf in _function_leaves(d)]
                        else:
                            out.append((r, d, d.name))
            return out
        return self.memo(("point_folders",), build)

    def labelled(self, *parts: str) -> list[tuple[str, Path]]:
        return [(r.label, p) for r, p in self.dirs(*parts)]

    def describe(self) -> str:
        lines = [f"notebook folder: {self.workdir}", f"profile: {self.profile}"]
        for i, r in enumerate(self.roots, 1):
            mark = "" if r.path.is_dir() else "  (missing)"
            lines.append(f"{i:2d}. {r.label:<24} {r.path}{mark}")
        return "\n".join(lines)


_MISSING = object()


def _watched_above(path: str, index: dict[str, int], seen: list[object]) -> tuple[object, bool]:
    """The stat of the nearest watched folder above `path` (_MISSING: it is missing; None: no such folder), and
    whether it is `path`'s own folder."""
    folder, direct = os.path.dirname(path), True
    while folder not in index:
        above = os.path.dirname(folder)
        if above == folder:
            return None, False
        folder, direct = above, False
    was = seen[index[folder]]
    return (_MISSING if was is None else was), direct


def _index_tree(root: Root, folder: Path, prefix: str, index: dict[str, list[tuple[Root, Path]]], depth: int) -> None:
    if depth > 16:  # deeper than any point name; a symlink loop stops here
        return
    for e in _scan(folder):
        try:
            is_dir = e.is_dir() and e.name != "__pycache__"
        except OSError:
            continue
        if is_dir:
            path = Path(e.path)
            index.setdefault(prefix + e.name, []).append((root, path))
            _index_tree(root, path, prefix + e.name + "/", index, depth + 1)


def py_files(folder: Path) -> list[Path]:
    """The `*.py` entries of `folder`, sorted by name (what `sorted(folder.glob("*.py"))` gives, in one scan)."""
    return [folder / name for name in sorted(e.name for e in _scan(folder) if e.name.endswith(".py"))]


def _function_leaves(d: Path) -> Sequence[Path]:
    leaves = []
    for sub in d.rglob("*"):
        if sub.is_dir() and sub.name in ("start", "end"):
            leaves.append(sub)
    return sorted(leaves)


def _scan(d: Path) -> list[os.DirEntry[str]]:
    try:
        return sorted(os.scandir(d), key=lambda e: e.name)
    except OSError:
        return []
