"""The live search hierarchy of one agent: the roots for its notebook folder and profile, the
enabled plugins, and a cheap change check so files edited next to the notebook apply on the next step."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from a0nb.diagnostics import Diagnostics
from a0nb.files.roots import Root, search_roots
from a0nb.files.prompt_lookup import RACY_NS
from a0nb.files.trust_scan import report as report_untrusted
from a0nb.files.plugins import Plugin, discover_plugins, enabled_plugin_dirs, toggle_dirs
from a0nb.folder_trust import remembered_file
from a0nb.resources import bundled_root, user_home

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
        self._parents: list[int] = []  # per watched path: the index of its folder in the list, or -1
        self._absent: list[bool] = []  # per watched path: missing, and its (old) folder's mtime will tell
        self._memo: dict[object, object] = {}
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
        # roots may have changed (a plugin appeared), so the watch list and signature are taken anew
        self._watch = None
        self._signature = self._compute_signature()
        return True

    def _watch_roots(self) -> list[tuple[Path, bool]]:
        """(folder, watch .py files too) — bundled files are part of the install and only their folders are watched."""
        if not self.roots:
            base = [self.workdir, self.workdir / ".a0proj", self.home]
            return [(p, True) for p in base]
        # The bundled defaults are part of the installation: only user-owned roots are watched.
        return [(r.path, True) for r in self.roots if r.kind not in ("bundled", "bundled-profile")] + [
            (self.home / "plugins", False), (self.workdir / "plugins", False)]

    def _compute_signature(self) -> tuple[object, ...]:
        """One stat per watched path. A folder's mtime changes when an entry is added, removed or renamed, and
        every change to the set of paths rebuilds the list, so a step costs stats only (no directory scans).
        A path found missing under a watched folder whose mtime was already old then (outside the coarse
        clock's reach, RACY_NS) is not stat'ed again: its appearance changes that folder's mtime; a path
        under a missing watched folder is missing too."""
        if self._watch is None:
            self._watch = self._watch_list()
            self._parents = _parent_indexes(self._watch)
            self._absent = [False] * len(self._watch)
        sig: list[object] = [self.profile, os.environ.get("A0NB_TRUST")]  # trusting a folder changes what loads
        head = len(sig)  # path i's entry is sig[head + i]
        stat = os.stat
        parents, absent = self._parents, self._absent
        now = time.time_ns()
        for i, path in enumerate(self._watch):
            if absent[i]:
                sig.append(None)
                continue
            parent = parents[i]
            if parent >= 0 and sig[head + parent] is None:
                sig.append(None)  # (not remembered: the folder may appear, and with it this path)
                continue
            try:
                st = stat(path)
            except OSError:
                sig.append(None)
                if parent >= 0:
                    up = sig[head + parent]
                    absent[i] = isinstance(up, tuple) and now - up[0] > RACY_NS
                continue
            sig.append((st.st_mtime_ns, st.st_size))
        return tuple(sig)

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
        for plugin in self.plugins:  # a `.toggle-0/1` appearing changes its folder's mtime
            for d in toggle_dirs(plugin, self.workdir, self.home, self.profile):
                out += [str(d), str(d / "config.json")]
        return out

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
        def build() -> list[tuple[Root, Path]]:
            out = []
            for r in self.roots:
                for spelling in _EXT_SPELLINGS:
                    d = r.path.joinpath(*spelling, *point.split("/"))
                    if d.is_dir():
                        out.append((r, d))
            return out
        return self.memo(("ext", point), build)

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


def _parent_indexes(paths: list[str]) -> list[int]:
    """The index of each path's folder when that folder is watched earlier in the list (else -1)."""
    index: dict[str, int] = {}
    out = []
    for i, p in enumerate(paths):
        out.append(index.get(os.path.dirname(p), -1))
        index.setdefault(p, i)
    return out


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
