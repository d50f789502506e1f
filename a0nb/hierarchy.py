"""The live search hierarchy of one agent: the roots for its notebook folder and profile, the
enabled plugins, and a cheap change check so files edited next to the notebook apply on the next step."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from .diagnostics import Diagnostics
from .roots import Root, search_roots
from .plugins import Plugin, discover_plugins, enabled_plugin_dirs, toggle_dirs
from .resources import bundled_root, user_home

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
        self._memo: dict[object, object] = {}
        self.plugins: list[Plugin] = []
        self.roots: list[Root] = []
        self.refresh()

    # -- change detection -------------------------------------------------------------------
    def set_profile(self, profile: str) -> None:
        if profile != self.profile:
            self.profile = profile
            self._signature = None
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
        self.generation += 1
        # roots may have changed (a plugin appeared), so the signature is taken over the new set
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
        sig: list[object] = [self.profile]
        for root, with_files in self._watch_roots():
            try:
                sig.append((str(root), root.stat().st_mtime_ns))
            except OSError:  # a missing root has no sub-folders; its parent's mtime shows its creation
                sig.append((str(root), None))
                continue
            for sub in _WATCHED[1:]:
                d = root / sub if sub else root
                try:
                    sig.append((str(d), d.stat().st_mtime_ns))
                except OSError:
                    continue
                if sub in ("extensions", "extensions/python"):
                    self._sign_tree(d, sig, with_files, depth=0)
                elif sub == "tools" and with_files:
                    self._sign_files(d, sig)
        self._sign_plugin_switches(sig)
        return tuple(sig)

    def _sign_plugin_switches(self, sig: list[object]) -> None:
        """Each plugin's scoped folders (a `.toggle-0/1` appearing changes the folder's mtime) and config.json."""
        for plugin in self.plugins:
            for d in toggle_dirs(plugin, self.workdir, self.home, self.profile):
                for path in (d, d / "config.json"):
                    try:
                        sig.append((str(path), path.stat().st_mtime_ns))
                    except OSError:
                        continue

    def _sign_tree(self, d: Path, sig: list[object], with_files: bool, depth: int) -> None:
        try:
            entries = list(os.scandir(d))
        except OSError:
            return
        for e in entries:
            if e.is_dir(follow_symlinks=False) and depth < 8 and e.name != "__pycache__":
                try:
                    sig.append((e.path, e.stat().st_mtime_ns))
                except OSError:
                    continue
                if e.name != "python" or depth > 0:
                    self._sign_tree(Path(e.path), sig, with_files, depth + 1)
            elif with_files and e.name.endswith(".py"):
                try:
                    st = e.stat()
                    sig.append((e.path, st.st_mtime_ns, st.st_size))
                except OSError:
                    continue

    def _sign_files(self, d: Path, sig: list[object]) -> None:
        try:
            for e in os.scandir(d):
                if e.name.endswith(".py"):
                    st = e.stat()
                    sig.append((e.path, st.st_mtime_ns, st.st_size))
        except OSError:
            return

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


def _function_leaves(d: Path) -> Sequence[Path]:
    leaves = []
    for sub in d.rglob("*"):
        if sub.is_dir() and sub.name in ("start", "end"):
            leaves.append(sub)
    return sorted(leaves)
