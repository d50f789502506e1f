"""The search hierarchy (ARCHITECTURE §2): one ordered list of labelled roots, highest priority
first, used for every lookup — prompts, tools, extensions, skills, profiles, plugin config."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal, Sequence

from a0nb.resources import bundled_root, user_home

RootKind = Literal[
    "project-profile", "project", "notebook-profile", "notebook", "user-profile", "user",
    "plugin-profile", "plugin", "bundled-profile", "bundled",
]


@dataclass(frozen=True)
class Root:
    """One place in the hierarchy. `label` is what the inspector shows (`plugin demo`, `notebook`)."""

    kind: RootKind
    path: Path
    plugin: str | None = None

    @property
    def label(self) -> str:
        if self.kind in ("plugin", "plugin-profile"):
            suffix = " (profile)" if self.kind == "plugin-profile" else ""
            return f"plugin {self.plugin}{suffix}"
        return self.kind

    def __str__(self) -> str:
        return f"{self.label}: {self.path}"


def search_roots(
    workdir: Path | str,
    profile: str = "default",
    *,
    home: Path | None = None,
    plugin_dirs: Sequence[tuple[str, Path]] = (),
    bundled: Path | None = None,
) -> list[Root]:
    """Every root of the hierarchy in priority order (existing or not; lookups skip missing ones).

    `plugin_dirs` are the enabled plugins, already ordered (notebook, user, entry points, bundled)."""
    nb = Path(workdir).resolve()
    home = (home or user_home()).expanduser()
    bundled = bundled or bundled_root()
    roots = [
        Root("project-profile", nb / ".a0proj" / "agents" / profile),
        Root("project", nb / ".a0proj"),
        Root("notebook-profile", nb / "agents" / profile),
        Root("notebook", nb),
        Root("user-profile", home / "agents" / profile),
        Root("user", home),
    ]
    for name, pdir in plugin_dirs:
        roots.append(Root("plugin-profile", pdir / "agents" / profile, name))
        roots.append(Root("plugin", pdir, name))
    roots.append(Root("bundled-profile", bundled / "agents" / profile))
    roots.append(Root("bundled", bundled))
    return _dedupe(roots)


def _dedupe(roots: Iterable[Root]) -> list[Root]:
    """A folder reached twice (a notebook inside the repository) counts once, at its first place."""
    seen: set[Path] = set()
    out: list[Root] = []
    for r in roots:
        key = r.path.resolve() if r.path.exists() else r.path
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def existing(roots: Iterable[Root], *parts: str) -> list[tuple[Root, Path]]:
    """`(root, root/parts)` for every root where that sub-folder exists, in priority order."""
    out = []
    for r in roots:
        p = r.path.joinpath(*parts)
        if p.is_dir():
            out.append((r, p))
    return out
