"""Knowledge import: text files under `knowledge/` folders become memories, chunked, incrementally by
checksum (a changed file is re-imported, a deleted one removed). A first-level subfolder named after an
area (`knowledge/solutions/...`) puts its files in that area; everything else goes to `main`."""
from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from a0nb.diagnostics import Diagnostics
from a0nb.engine.documents import DocumentError, NoPdfReader, pdf_text
from a0nb.engine.memory.store import AREAS, MemoryStore

SUFFIXES = (".md", ".txt", ".csv", ".json", ".pdf")
MAX_FILE_BYTES = 5_000_000
CHUNK_CHARS = 1200


@dataclass
class ImportReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    chunks: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def __str__(self) -> str:
        return (f"knowledge: {len(self.added)} added, {len(self.updated)} updated, {len(self.removed)} removed, "
                f"{self.unchanged} unchanged ({self.chunks} chunks written)")


def import_knowledge(store: MemoryStore, folders: Sequence[tuple[Path, str]], diagnostics: Diagnostics,
                     timestamp: str = "") -> ImportReport:
    """Bring `store` in line with the files under each (folder, label); labels prefix the source paths."""
    report = ImportReport()
    known = store.knowledge_files()
    seen: set[str] = set()
    for folder, label in folders:
        for path in _files(folder):
            key = f"{label}/{path.relative_to(folder).as_posix()}"
            seen.add(key)
            data = _read_bytes(path, diagnostics)
            if data is None:
                continue
            checksum = hashlib.sha256(data).hexdigest()
            old = known.get(key)
            if old is not None and old[0] == checksum:
                report.unchanged += 1
                continue
            text = _text_of(path, data, diagnostics)
            if text is None:
                continue
            if old is not None:
                store.delete(old[1])
            rel = path.relative_to(folder).parts
            area = rel[0] if len(rel) > 1 and rel[0] in AREAS else "main"
            chunks = chunk_text(text)
            metas = [{"source_file": key, "chunk": n, "knowledge_source": True, "timestamp": timestamp}
                     for n in range(len(chunks))]
            ids = store.insert(chunks, area, metas)
            store.set_knowledge(key, checksum, ids)
            report.chunks += len(chunks)
            (report.updated if old is not None else report.added).append(key)
    labels = tuple(f"{label}/" for _, label in folders)
    for key, (_checksum, ids) in known.items():
        if key not in seen and key.startswith(labels):
            store.delete(ids)
            store.set_knowledge(key, None)
            report.removed.append(key)
    return report


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def _read_bytes(path: Path, diagnostics: Diagnostics) -> bytes | None:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            diagnostics.add("warning", "memory", f"knowledge file skipped: {size:,} bytes is over the "
                            f"{MAX_FILE_BYTES:,}-byte limit", path, fix="split it into smaller files")
            return None
        return path.read_bytes()
    except OSError as exc:
        diagnostics.add("error", "memory", f"knowledge file unreadable: {exc.strerror or exc}", path,
                        fix="check its permissions, or move it out of knowledge/")
        return None


def _text_of(path: Path, data: bytes, diagnostics: Diagnostics) -> str | None:
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return _pdf_text(path, data, diagnostics)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        diagnostics.add("error", "memory", f"knowledge file is not UTF-8 text (byte {exc.start})", path,
                        fix="save it as UTF-8")
        return None
    if suffix == ".json":
        try:
            return json.dumps(json.loads(text), ensure_ascii=False, indent=1)
        except ValueError as exc:
            diagnostics.add("warning", "memory", f"knowledge JSON does not parse ({exc}); imported as text", path)
            return text
    if suffix == ".csv":
        rows = list(csv.reader(io.StringIO(text)))
        if len(rows) > 1:
            head = rows[0]
            return "\n".join("; ".join(f"{h}: {v}" for h, v in zip(head, r)) for r in rows[1:] if any(r))
    return text


def _pdf_text(path: Path, data: bytes, diagnostics: Diagnostics) -> str | None:
    try:
        return pdf_text(data, path.name)
    except NoPdfReader:
        diagnostics.add("warning", "memory", "PDF knowledge needs the pypdf package; file skipped", path,
                        fix="pip install 'a0nb[documents]', or save the document as .md/.txt")
    except DocumentError as exc:
        diagnostics.add("error", "memory", f"PDF unreadable: {exc}", path)
    return None


def chunk_text(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """Paragraphs packed into chunks of at most `size` characters (longer paragraphs are cut at spaces)."""
    pieces: list[str] = []
    for para in (p.strip() for p in text.replace("\r\n", "\n").split("\n\n")):
        while len(para) > size:
            cut = para.rfind(" ", 0, size)
            cut = cut if cut > size // 2 else size
            pieces.append(para[:cut].strip())
            para = para[cut:].strip()
        if para:
            pieces.append(para)
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + 2 + len(piece) <= size:
            chunks[-1] += "\n\n" + piece
        else:
            chunks.append(piece)
    return chunks


__all__ = ["import_knowledge", "ImportReport", "chunk_text", "SUFFIXES", "MAX_FILE_BYTES"]
