"""An agent's memory: which folder (global `$A0NB_HOME/memory/default/`, or the project's `.a0proj/memory/`
when `project.json` says `"memory": "own"`), which embedder, and knowledge kept in sync with the files."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from a0nb.diagnostics import Diagnostics
from a0nb.engine.documents import PassageIndexes
from a0nb.engine.memory.embeddings import Embedder, HashEmbedder, make_embedder
from a0nb.engine.memory.knowledge import ImportReport, import_knowledge
from a0nb.engine.memory.store import Memory, MemoryStore, is_dir
from a0nb.files.file_events import Quiet, containing_folders, folders_within, reuse
from a0nb.files.prompt_lookup import RACY_NS
from a0nb.resources import user_home

PROJECT_MODES = ("own", "project")


def memory_folder(workdir: Path, home: Path | None) -> tuple[Path, bool]:
    """(folder, is_project): the project's own memory when its project.json asks for it. Asked on every
    recall: project.json is read again only when its stat changed (or it was written very recently)."""
    base = home or user_home()
    last = _LAST[0]
    if last[0] is workdir and last[1] is base:  # (the same Paths as last time: no Path hashing)
        names = last[2]
    else:
        key = (workdir, base)
        names = _NAMES.get(key)
        if names is None:
            meta = workdir / ".a0proj"
            if len(_NAMES) >= _KEPT:
                _NAMES.clear()  # (an unusual process: started again)
            names = _NAMES[key] = (str(meta / "project.json"), (meta / "memory", True),
                                   (base / "memory" / "default", False))
        _LAST[0] = (workdir, base, names)
    old = _QUIET.get(names)  # (no file event where project.json is, or would be, since: no stat)
    found, kept = reuse(old, lambda: containing_folders([names[0]]), lambda: _memory_folder(names))
    if kept is not old and kept is not None:
        if len(_QUIET) >= _KEPT:
            _QUIET.clear()
        _QUIET[names] = kept
    return found


def _memory_folder(names: tuple[str, tuple[Path, bool], tuple[Path, bool]]) -> tuple[Path, bool]:
    try:
        st = os.stat(names[0])
    except FileNotFoundError:
        return names[2]
    except (OSError, ValueError):
        st = None  # (read_text below fails the same way: the global folder)
    stamp = (st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns, st.st_size) if st is not None else None
    seen = _MODES.get(names[0])
    if stamp is not None and seen is not None and seen[0] == stamp:
        return names[1] if seen[1] else names[2]
    try:
        data = json.loads(Path(names[0]).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    own = isinstance(data, dict) and data.get("memory") in PROJECT_MODES
    if stamp is not None and time.time_ns() - max(stamp[2], stamp[3]) >= RACY_NS:  # else it may change unseen
        if len(_MODES) >= _KEPT:
            _MODES.clear()
        _MODES[names[0]] = (stamp, own)
    return names[1] if own else names[2]


# Process-wide, and checked on every use: the paths worked out for a (workdir, home), and what each
# project.json said with the stat it had then.
_NAMES: dict[tuple[Path, Path], tuple[str, tuple[Path, bool], tuple[Path, bool]]] = {}
_LAST: list[tuple[Any, Any, Any]] = [(None, None, None)]  # (workdir, home, their _NAMES entry): one slot, replaced whole
_MODES: dict[str, tuple[tuple[int, int, int, int, int], bool]] = {}
# (a Quiet taken before a look at project.json, the folder it led to), by _NAMES entry
_QUIET: dict[tuple[str, tuple[Path, bool], tuple[Path, bool]], tuple[Quiet, tuple[Path, bool]]] = {}
_KEPT = 64


def knowledge_folders(workdir: Path, home: Path | None, is_project: bool) -> list[tuple[Path, str]]:
    """Project knowledge always; the user's `$A0NB_HOME/knowledge/` only for global memory (no mixing)."""
    folders = [(workdir / ".a0proj" / "knowledge", ".a0proj/knowledge")]
    if not is_project:
        folders.append(((home or user_home()) / "knowledge", "home/knowledge"))
    return folders


def _fingerprint(folders: Sequence[tuple[Path | str, str]]) -> tuple[Any, ...]:
    out: list[Any] = []
    for folder, _ in folders:
        if not is_dir(folder):
            continue
        for root, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                try:
                    st = os.stat(os.path.join(root, name))
                except OSError:
                    continue
                out.append((root, name, st.st_mtime_ns, st.st_size))
    return tuple(out)


class Memories:
    """The memory one agent uses; shared by the agents of a chat that resolve to the same folder."""

    def __init__(self, folder: Path, knowledge: Sequence[tuple[Path, str]], embedder: Embedder,
                 diagnostics: Diagnostics, on_model_change: Callable[[str, str], None] | None = None,
                 clock: Callable[[], str] = lambda: "", label: str = "") -> None:
        self.folder = folder
        self.label = label or str(folder)
        self.knowledge = tuple(knowledge)
        # (the knowledge tuple, its folders' names as str: stat'ed on every recall without pathlib's calls)
        self._watched: tuple[tuple[tuple[Path, str], ...], tuple[tuple[str, str], ...]] | None = None
        self.embedder = embedder
        self.diagnostics = diagnostics
        self.clock = clock
        self.store = MemoryStore(folder, embedder, diagnostics, on_model_change=on_model_change)
        self.documents = PassageIndexes(embedder)  # (document_query's documents, embedded once a chat)
        self._knowledge_seen: tuple[Any, ...] | None = None
        self.last_import: ImportReport | None = None
        self._quiet: tuple[Quiet, bool] | None = None  # (a Quiet taken before the last look, whether it was empty)

    def sync(self) -> ImportReport | None:
        """Import changed knowledge files (a stat walk when nothing changed); None if nothing to do."""
        watched = self._watched
        if watched is None or watched[0] is not self.knowledge:
            watched = self._watched = (self.knowledge, tuple((str(p), label) for p, label in self.knowledge))
        seen = _fingerprint(watched[1])
        if seen == self._knowledge_seen:
            return None
        if not seen and not self.store.exists():
            self._knowledge_seen = seen  # no knowledge, no memories yet: do not create the database
            return None
        self.last_import = import_knowledge(self.store, self.knowledge, self.diagnostics, self.clock())
        self._knowledge_seen = seen
        return self.last_import

    def is_empty(self) -> bool:
        """True when there is nothing to recall (cheap: no database is opened or created for it; no stat while
        no file event came from the knowledge folders or the database's since the last look)."""
        empty, self._quiet = reuse(self._quiet, self._folders, self._look_empty)
        return empty

    def _look_empty(self) -> bool:
        self.sync()
        return not self.store.exists() or len(self.store) == 0

    def _folders(self) -> list[str]:
        """The knowledge folders and every folder in them (or the folder a missing one would appear in), and
        the database's folder (or where it would appear)."""
        out = [f for folder, _ in self.knowledge for f in folders_within(str(folder))]
        return out + containing_folders([str(self.store.path)])

    def save(self, text: str, area: str = "main", **meta: Any) -> str:
        self.sync()
        return self.store.insert([text], area, [{"timestamp": self.clock(), **meta}])[0]

    def search(self, query: str, limit: int = 5, threshold: float = 0.7, filter: str = "",
               areas: Sequence[str] | None = None) -> list[Memory]:
        if self.is_empty():
            return []
        return self.store.search(query, limit, threshold, filter, areas)

    def delete(self, ids: Sequence[str]) -> list[str]:
        self.sync()
        return self.store.delete(ids) if self.store.exists() else []

    def forget(self, query: str, threshold: float = 0.75, filter: str = "") -> list[str]:
        """Delete every memory at least `threshold` similar to `query` (Agent Zero's memory_forget)."""
        found = self.search(query, limit=10_000, threshold=threshold, filter=filter)
        return self.delete([m.id for m in found])

    def describe(self) -> str:
        n = len(self.store) if self.store.exists() else 0
        return f"{n} memories in {self.label} (embedder {self.embedder.name})"


def memories_of(agent: Any) -> Memories:
    """The agent's Memories (created on first use, cached chat-wide per folder and embedding model)."""
    home = agent.shared.home
    folder, is_project = memory_folder(agent.workdir, home)
    spec = agent.settings.embedding_model
    cache = agent.shared.memories
    key = (str(folder), spec)
    if key not in cache:
        embedder = make_embedder(spec)
        if spec == "local" and isinstance(embedder, HashEmbedder):
            agent.diagnostics.add("info", "memory", "the offline embedding model is not installed; memory uses "
                                  "the lexical hashing fallback", None, fix="pip install 'a0nb[memory]'")

        def changed(old: str, new: str) -> None:
            agent.fire_sync("embedding_model_changed", old=old, new=new, folder=str(folder))

        label = "the project's memory (.a0proj/memory)" if is_project else "global memory ($A0NB_HOME/memory/default)"
        cache[key] = Memories(folder, knowledge_folders(agent.workdir, home, is_project), embedder,
                              agent.diagnostics, changed, lambda: agent.now().isoformat(), label)
    return cache[key]


__all__ = ["Memories", "memories_of", "memory_folder", "knowledge_folders"]
