"""One memory folder: memories (text, area, metadata, vector) in `memory.sqlite`, searched through an
in-memory vector index built at open; re-embedded when the embedding model changes."""
from __future__ import annotations

import errno
import hashlib
import json
import os
import sqlite3
import stat
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from a0nb.diagnostics import Diagnostics
from a0nb.engine.memory.embeddings import Embedder
from a0nb.engine.memory.filter import compile_filter
from a0nb.engine.memory.index import VectorIndex, make_index

AREAS = ("main", "fragments", "solutions")
DB_NAME = "memory.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (id TEXT PRIMARY KEY, area TEXT NOT NULL, text TEXT NOT NULL,
                                     meta TEXT NOT NULL, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS knowledge (path TEXT PRIMARY KEY, checksum TEXT NOT NULL, ids TEXT NOT NULL);
"""


@dataclass(frozen=True)
class Memory:
    id: str
    area: str
    text: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    score: float | None = None

    @property
    def source(self) -> str:
        return str(self.meta.get("source_file") or "")

    def provenance(self) -> str:
        """`id abc, area main, score 0.81, source notes.md` (what recall and the inspector show)."""
        bits = [f"id {self.id}", f"area {self.area}"]
        if self.score is not None:
            bits.append(f"score {self.score:.2f}")
        if self.source:
            bits.append(f"source {self.source}")
        return ", ".join(bits)

    def render(self) -> str:
        """The memory as the model sees it: provenance in brackets, then the text."""
        return f"[{self.provenance()}]\n{self.text}"


def memory_id(area: str, text: str, salt: str = "") -> str:
    """Content-derived (the same text saved twice is one memory; ids are stable across runs)."""
    return hashlib.sha1(f"{area}\0{salt}\0{text}".encode()).hexdigest()[:10]


class MemoryStore:
    """Memories of one folder (global: `$A0NB_HOME/memory/`, project: `.a0proj/memory/`)."""

    def __init__(self, folder: Path, embedder: Embedder, diagnostics: Diagnostics | None = None,
                 backend: str | None = None, on_model_change: Callable[[str, str], None] | None = None) -> None:
        self.folder = Path(folder)
        self.embedder = embedder
        self.diagnostics = diagnostics if diagnostics is not None else Diagnostics()
        self.backend = backend
        self.on_model_change = on_model_change
        self._db: sqlite3.Connection | None = None
        self._index: VectorIndex | None = None
        self._rows: dict[str, Memory] = {}
        self._path: tuple[Path, Path, str] | None = None

    # -- opening -------------------------------------------------------------------------------
    def _paths(self) -> tuple[Path, Path, str]:
        """(folder, database file, its name as a str: stat'ed without pathlib's calls), worked out once per
        folder: asked on every recall."""
        folder, known = self.folder, self._path
        if known is None or known[0] is not folder:
            path = folder / DB_NAME
            known = self._path = (folder, path, str(path))
        return known

    @property
    def path(self) -> Path:
        return self._paths()[1]

    def exists(self) -> bool:
        return _is(self._paths()[2], stat.S_ISREG)

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            db = self._connect()
            db.execute("SELECT count(*) FROM memories").fetchone()
            return db
        except sqlite3.DatabaseError as exc:
            moved = self._set_aside()
            self.diagnostics.add("error", "memory", f"the memory database was unreadable ({exc}); it was moved "
                                 f"to {moved.name} and a new one started (knowledge files are imported again)",
                                 self.path, fix=f"delete {moved} once nothing in it is needed")
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path), check_same_thread=False)
        db.executescript(_SCHEMA)
        return db

    def _set_aside(self) -> Path:
        n = 1
        while (self.folder / f"{DB_NAME}.corrupt-{n}").exists():
            n += 1
        target = self.folder / f"{DB_NAME}.corrupt-{n}"
        self.path.rename(target)
        for extra in ("-wal", "-shm", "-journal"):
            Path(str(self.path) + extra).unlink(missing_ok=True)
        return target

    @property
    def index(self) -> VectorIndex:
        if self._index is None:
            self._index = self._load_index()
        return self._index

    def _load_index(self) -> VectorIndex:
        db = self.db
        stored = dict(db.execute("SELECT key, value FROM info").fetchall())
        model = stored.get("model")
        if model is not None and model != self.embedder.name:
            self._reembed(model)
        rows = self._readable(db.execute("SELECT id, area, text, meta, vec FROM memories").fetchall())
        dim = self.embedder.dim or (len(rows[0][4]) if rows else 0)
        index = make_index(dim, self.backend)
        self._rows = {r[0]: Memory(r[0], r[1], r[2], r[3]) for r in rows}
        if rows:
            index.add([r[0] for r in rows], [r[4] for r in rows])
        if model is None:
            self._set_info()
        return index

    def _readable(self, rows: list[tuple[Any, ...]]) -> list[tuple[str, str, str, dict[str, Any], array]]:
        """Rows with their metadata and vector decoded; a row whose vector or metadata cannot be read (a torn
        write, a foreign tool) is re-embedded from its text, which with its id and area is all a memory needs."""
        out, bad = [], []
        for r in rows:
            try:
                meta, vec = json.loads(r[3]), array("f", r[4])
            except (ValueError, TypeError):
                bad.append(r)
                continue
            if not isinstance(meta, dict):
                bad.append(r)
                continue
            out.append((r[0], r[1], r[2], meta, vec))
        lengths = [len(r[4]) for r in out]
        dim = self.embedder.dim or (max(set(lengths), key=lengths.count) if lengths else 0)
        bad += [(i, a, t, json.dumps(m), v.tobytes()) for i, a, t, m, v in out if len(v) != dim]
        out = [r for r in out if len(r[4]) == dim]
        if not bad:
            return out
        vectors = self.embedder.embed([str(r[2]) for r in bad])
        fixed = []
        for r, v in zip(bad, vectors):
            try:
                meta = json.loads(r[3])
            except (ValueError, TypeError):
                meta = None
            meta = {**(meta if isinstance(meta, dict) else {}), "id": r[0], "area": r[1]}
            fixed.append((str(r[0]), str(r[1]), str(r[2]), meta, array("f", v)))
        self.db.executemany("UPDATE memories SET meta = ?, vec = ? WHERE id = ?",
                            [(json.dumps(m, ensure_ascii=False, default=str), v.tobytes(), i) for i, _, _, m, v in fixed])
        self.db.commit()
        self.diagnostics.add("warning", "memory", f"{len(fixed)} memories had an unreadable vector or metadata "
                             f"({', '.join(r[0] for r in fixed[:5])}{' ...' if len(fixed) > 5 else ''}); they were "
                             "re-embedded from their text, nothing was dropped", self.path)
        return out + fixed

    def _set_info(self) -> None:
        self.db.executemany("INSERT OR REPLACE INTO info VALUES (?, ?)",
                            [("model", self.embedder.name), ("dim", str(self.embedder.dim))])
        self.db.commit()

    def _reembed(self, old: str) -> None:
        rows = self.db.execute("SELECT id, text FROM memories").fetchall()
        vectors = self.embedder.embed([t for _, t in rows]) if rows else []
        self.db.executemany("UPDATE memories SET vec = ? WHERE id = ?",
                            [(array("f", v).tobytes(), i) for (i, _), v in zip(rows, vectors)])
        self._set_info()
        if self.on_model_change is not None:
            self.on_model_change(old, self.embedder.name)

    # -- writing -------------------------------------------------------------------------------
    def insert(self, texts: Sequence[str], area: str = "main", metas: Sequence[Mapping[str, Any]] | None = None,
               salt: str = "") -> list[str]:
        """Store texts in `area`; returns their ids (an identical text in the same area is replaced)."""
        if area not in AREAS:
            raise ValueError(f"unknown memory area {area!r}; use one of {', '.join(AREAS)}")
        metas = list(metas) if metas is not None else [{} for _ in texts]
        ids = [memory_id(area, t, salt + str(m.get("source_file", "")) + str(m.get("chunk", "")))
               for t, m in zip(texts, metas)]
        if not texts:
            return ids
        index = self.index
        vectors = self.embedder.embed(list(texts))
        rows = []
        for i, t, m, v in zip(ids, texts, metas, vectors):
            meta = {**m, "id": i, "area": area}
            rows.append((i, area, t, json.dumps(meta, ensure_ascii=False, default=str), array("f", v).tobytes()))
            self._rows[i] = Memory(i, area, t, meta)
        self.db.executemany("INSERT OR REPLACE INTO memories VALUES (?, ?, ?, ?, ?)", rows)
        self.db.commit()
        index.add(ids, vectors)
        return ids

    def delete(self, ids: Iterable[str]) -> list[str]:
        """Remove memories by id; returns the ids that existed."""
        self.index  # loads the rows
        found = [i for i in dict.fromkeys(ids) if i in self._rows]
        if found:
            self.db.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i in found])
            self.db.commit()
            self.index.remove(found)
            for i in found:
                self._rows.pop(i, None)
        return found

    # -- reading -------------------------------------------------------------------------------
    def search(self, query: str, limit: int = 5, threshold: float = 0.0, filter: str = "",
               areas: Sequence[str] | None = None) -> list[Memory]:
        """The best `limit` memories scoring ≥ `threshold` whose metadata passes `filter`."""
        predicate = compile_filter(filter)
        index = self.index
        if not len(index) or limit <= 0:
            return []
        qv = self.embedder.embed([query])[0]
        want = limit
        while True:  # filters and areas may reject the best rows: widen the candidate list until enough pass
            ranked = index.ranked(qv, want)
            out: list[Memory] = []
            for i, score in ranked:
                if score < threshold:
                    return out
                m = self._rows[i]
                if (areas is None or m.area in areas) and predicate(m.meta):
                    out.append(Memory(m.id, m.area, m.text, m.meta, score))
                    if len(out) == limit:
                        return out
            if len(ranked) < want:
                return out
            want *= 4

    def get(self, memory_id: str) -> Memory | None:
        self.index
        return self._rows.get(memory_id)

    def all(self, area: str | None = None) -> list[Memory]:
        self.index
        return [m for m in self._rows.values() if area is None or m.area == area]

    def __len__(self) -> int:
        return len(self.index)

    # -- knowledge bookkeeping ------------------------------------------------------------------
    def knowledge_files(self) -> dict[str, tuple[str, list[str]]]:
        return {p: (c, json.loads(ids)) for p, c, ids in self.db.execute("SELECT path, checksum, ids FROM knowledge")}

    def set_knowledge(self, path: str, checksum: str | None, ids: Sequence[str] = ()) -> None:
        if checksum is None:
            self.db.execute("DELETE FROM knowledge WHERE path = ?", (path,))
        else:
            self.db.execute("INSERT OR REPLACE INTO knowledge VALUES (?, ?, ?)", (path, checksum, json.dumps(list(ids))))
        self.db.commit()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
        self._db, self._index, self._rows = None, None, {}


_QUIET_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})  # as pathlib's is_file()


def _is(path: Path | str, kind: Callable[[int], bool]) -> bool:
    """Path.is_file() / is_dir() with one stat and no pathlib calls: False when it is missing, an error
    pathlib would raise is raised."""
    try:
        return kind(os.stat(path).st_mode)
    except OSError as exc:
        if exc.errno not in _QUIET_ERRNOS and getattr(exc, "winerror", None) not in (21, 123, 1921):
            raise
        return False
    except ValueError:
        return False


def is_dir(path: Path | str) -> bool:
    return _is(path, stat.S_ISDIR)


__all__ = ["MemoryStore", "Memory", "AREAS", "memory_id", "DB_NAME", "is_dir"]
