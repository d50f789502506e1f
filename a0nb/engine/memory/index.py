"""Vector indexes over normalised vectors (inner product = cosine): faiss-cpu's flat index (Agent Zero's
choice) when `a0nb[memory]` is installed, numpy when only numpy is, plain Python otherwise."""
from __future__ import annotations

import importlib.util
import math
from typing import Any, Protocol, Sequence

Vector = Sequence[float]


class VectorIndex(Protocol):
    """Ids with vectors; `ranked` yields (id, score) best first."""

    backend: str

    def add(self, ids: Sequence[str], vectors: Any) -> None: ...
    def remove(self, ids: Sequence[str]) -> None: ...
    def ranked(self, query: Vector, limit: int) -> list[tuple[str, float]]: ...
    def __len__(self) -> int: ...


class PlainIndex:
    """Pure Python: exact and dependency-free, fine for a few thousand memories."""

    backend = "python"

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._rows: dict[str, list[float]] = {}

    def add(self, ids: Sequence[str], vectors: Any) -> None:
        for i, v in zip(ids, vectors):
            self._rows[i] = [float(x) for x in v]

    def remove(self, ids: Sequence[str]) -> None:
        for i in ids:
            self._rows.pop(i, None)

    def ranked(self, query: Vector, limit: int) -> list[tuple[str, float]]:
        q = list(query)
        scored = [(i, math.fsum(a * b for a, b in zip(q, v))) for i, v in self._rows.items()]
        scored.sort(key=lambda t: -t[1])
        return scored[:limit]

    def __len__(self) -> int:
        return len(self._rows)


class NumpyIndex:
    """One float32 matrix; removals compact it lazily (on the next search)."""

    backend = "numpy"

    def __init__(self, dim: int) -> None:
        import numpy as np
        self.np = np
        self.dim = dim
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}
        self._chunks: list[Any] = []
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._dead: set[int] = set()

    def add(self, ids: Sequence[str], vectors: Any) -> None:
        np = self.np
        if not len(ids):
            return
        self.remove([i for i in ids if i in self._pos])
        arr = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        for i in ids:
            self._pos[i] = len(self._ids)
            self._ids.append(i)
        self._chunks.append(arr)

    def remove(self, ids: Sequence[str]) -> None:
        for i in ids:
            pos = self._pos.pop(i, None)
            if pos is not None:
                self._dead.add(pos)

    def _compact(self) -> Any:
        np = self.np
        if self._chunks:
            self._matrix = np.concatenate([self._matrix, *self._chunks])
            self._chunks = []
            self._changed()
        if self._dead:
            keep = [p for p in range(len(self._ids)) if p not in self._dead]
            self._matrix = self._matrix[keep]
            self._ids = [self._ids[p] for p in keep]
            self._pos = {i: n for n, i in enumerate(self._ids)}
            self._dead = set()
            self._changed()
        return self._matrix

    def _changed(self) -> None:
        """Hook for subclasses that mirror the matrix."""

    def ranked(self, query: Vector, limit: int) -> list[tuple[str, float]]:
        np = self.np
        matrix = self._compact()
        if not len(self._ids) or limit <= 0:
            return []
        scores = matrix @ np.asarray(query, dtype=np.float32)
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self._ids[p], float(scores[p])) for p in top]

    def __len__(self) -> int:
        return len(self._pos)


class FaissIndex(NumpyIndex):
    """faiss IndexFlatIP over the same matrix (exact search; rebuilt after removals)."""

    backend = "faiss"

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        import faiss
        self.faiss = faiss
        self._index = faiss.IndexFlatIP(dim)

    def _changed(self) -> None:
        self._index = self.faiss.IndexFlatIP(self.dim)
        if len(self._matrix):
            self._index.add(self._matrix)

    def ranked(self, query: Vector, limit: int) -> list[tuple[str, float]]:
        self._compact()
        if not len(self._ids) or limit <= 0:
            return []
        q = self.np.asarray(query, dtype=self.np.float32).reshape(1, self.dim)
        scores, rows = self._index.search(q, min(limit, len(self._ids)))
        return [(self._ids[r], float(s)) for s, r in zip(scores[0], rows[0]) if r >= 0]


def available_backends() -> list[str]:
    found = ["python"]
    if importlib.util.find_spec("numpy") is not None:
        found.append("numpy")
        if importlib.util.find_spec("faiss") is not None:
            found.append("faiss")
    return found


def make_index(dim: int, backend: str | None = None) -> VectorIndex:
    """The best available index (faiss > numpy > python), or the named one."""
    backend = backend or available_backends()[-1]
    kinds: dict[str, type] = {"python": PlainIndex, "numpy": NumpyIndex, "faiss": FaissIndex}
    if backend not in kinds:
        raise ValueError(f"unknown index backend {backend!r}; use one of {', '.join(kinds)}")
    index: VectorIndex = kinds[backend](dim)
    return index


__all__ = ["VectorIndex", "PlainIndex", "NumpyIndex", "FaissIndex", "make_index", "available_backends"]
