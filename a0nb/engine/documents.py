"""Documents as text for an agent (Agent Zero's `document_query` tool stands on these): a local file or an
http(s) URL read as text (plain text and code, HTML without its markup, PDF through pypdf), and passages (the
knowledge import's chunks) ranked against a question with the memory's embedder.

Reads are bounded: MAX_BYTES per document, FETCH_TIMEOUT per request. A relative path is taken from the
notebook folder. What a document holds reaches the model as a tool result, masked like any other."""
from __future__ import annotations

import hashlib
import os
import re
import threading
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import unquote, urlparse

__all__ = ["DocumentError", "NoPdfReader", "MAX_BYTES", "FETCH_TIMEOUT", "read_document", "pdf_text", "rank_passages",
           "PassageIndex", "PassageIndexes"]

MAX_BYTES = 20_000_000
FETCH_TIMEOUT = 30.0
_TEXTUAL = ("text/", "application/json", "application/xml", "application/javascript", "application/x-yaml",
            "application/yaml", "application/toml", "application/x-sh", "application/sql")


class DocumentError(ValueError):
    """A document that cannot be read as text; the message names it and says why."""


class NoPdfReader(DocumentError):
    """A PDF, and pypdf is not installed."""


def read_document(uri: str, workdir: Path) -> str:
    """The text of the document at `uri`: a path (relative to `workdir`), a file:// URI, or an http(s) URL."""
    parsed = urlparse(uri.strip())
    if parsed.scheme in ("http", "https"):
        data, mime = _fetch(uri.strip())
    elif parsed.scheme in ("", "file") or len(parsed.scheme) == 1:  # (a Windows drive letter is no scheme)
        path = unquote(parsed.path) if parsed.scheme == "file" else uri.strip()
        data, mime = _read_file(Path(workdir, os.path.expanduser(path)))
    else:
        raise DocumentError(f"{uri}: unsupported scheme {parsed.scheme!r} (a path, file://, http:// or https://)")
    return _as_text(uri, data, mime)


def _read_file(path: Path) -> tuple[bytes, str]:
    if not path.is_file():  # (a folder, a missing file, or a pipe a read would block on)
        raise DocumentError(f"{path}: no such file")
    if path.stat().st_size > MAX_BYTES:
        raise DocumentError(f"{path}: larger than {MAX_BYTES:,} bytes")
    return path.read_bytes(), _guess(path.name)


def _fetch(url: str) -> tuple[bytes, str]:
    import urllib.request  # (with http.client and ssl: only when a document is fetched)

    request = urllib.request.Request(url, headers={"User-Agent": "a0nb-document-query"})
    try:
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT) as response:  # noqa: S310 (http(s) only, above)
            data = response.read(MAX_BYTES + 1)
            mime = response.headers.get_content_type() if response.headers.get("Content-Type") else ""
    except OSError as exc:  # URLError, HTTPError, timeouts
        raise DocumentError(f"{url}: could not be fetched ({exc})") from exc
    if len(data) > MAX_BYTES:
        raise DocumentError(f"{url}: larger than {MAX_BYTES:,} bytes")
    return data, mime or _guess(urlparse(url).path)


def _guess(name: str) -> str:
    import mimetypes

    return mimetypes.guess_type(name)[0] or ""


def _as_text(uri: str, data: bytes, mime: str) -> str:
    if mime == "application/octet-stream":  # (says nothing: a server's default) the bytes decide
        mime = ""
    if mime == "application/pdf" or data[:5] == b"%PDF-":
        return pdf_text(data, uri)
    if mime in ("text/html", "application/xhtml+xml") or (not mime and data.lstrip()[:15].lower().startswith(
            (b"<!doctype html", b"<html"))):
        return _html_text(data.decode("utf-8", errors="replace"))
    if mime and not mime.startswith(_TEXTUAL):
        raise DocumentError(f"{uri}: {mime} cannot be read as text (plain text, HTML and PDF can)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        if b"\x00" in data[:4096]:
            raise DocumentError(f"{uri}: a binary file cannot be read as text (plain text, HTML and PDF can)") from None
        return data.decode("latin-1")


def pdf_text(data: bytes, name: str) -> str:
    """The text of a PDF's pages (pypdf), a blank line between pages; `name` is for the error messages."""
    try:
        from pypdf import PdfReader
    except ImportError:
        raise NoPdfReader(f"{name}: reading a PDF needs pypdf (pip install 'a0nb[documents]')") from None
    try:
        from io import BytesIO

        reader = PdfReader(BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:  # pypdf's errors for a damaged or encrypted file
        raise DocumentError(f"{name}: the PDF could not be read ({type(exc).__name__}: {exc})") from exc
    return "\n\n".join(text.strip() for text in pages if text.strip())


def _text_parser() -> Any:
    """An HTML parser that keeps a page's visible text (html.parser imported on first use)."""
    from html.parser import HTMLParser

    class Text(HTMLParser):
        """An HTML page's visible text, a line per block (scripts and styles left out)."""

        _SKIP = {"script", "style", "noscript", "template", "head"}
        _BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "pre",
                  "table", "ul", "ol", "blockquote", "title"}

        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.parts: list[str] = []
            self.skipping = 0

        def handle_starttag(self, tag: str, attrs: Any) -> None:
            if tag in self._SKIP:
                self.skipping += 1
            elif tag in self._BLOCK:
                self.parts.append("\n")

        def handle_endtag(self, tag: str) -> None:
            if tag in self._SKIP:
                self.skipping = max(0, self.skipping - 1)
            elif tag in self._BLOCK:
                self.parts.append("\n")

        def handle_data(self, data: str) -> None:
            if not self.skipping:
                self.parts.append(data)

    return Text()


def _html_text(html: str) -> str:
    parser = _text_parser()
    parser.feed(html)
    parser.close()
    lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in "".join(parser.parts).split("\n"))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def rank_passages(passages: Sequence[str], query: str, embedder: Any, limit: int = 5) -> list[int]:
    """The indexes of the `limit` passages closest to `query` (the memory's vector index over `embedder`'s
    normalised vectors: faiss, numpy or plain Python, as installed), best first; none at 0 or below."""
    if not passages or not query.strip():
        return []
    return [i for i, _score in PassageIndex(passages, embedder).ranked(query, limit)]


class PassageIndex:
    """A document's passages with their vectors under one embedder: embedded once, then ranked against any
    number of queries (each query is one embedding)."""

    def __init__(self, passages: Sequence[str], embedder: Any) -> None:
        from a0nb.engine.memory.index import make_index  # (here: the memory package imports this module)

        self.passages = list(passages)
        self.embedder = embedder
        self.index = None
        if self.passages:
            vectors = embedder.embed(self.passages)
            self.index = make_index(len(vectors[0]))
            self.index.add([str(i) for i in range(len(self.passages))], vectors)

    def ranked(self, query: str, limit: int) -> list[tuple[int, float]]:
        """(passage index, score) of the `limit` passages closest to `query`, best first; none at 0 or below."""
        if self.index is None or not query.strip():
            return []
        return self.nearest(self.embedder.embed([query])[0], limit)

    def nearest(self, vector: Sequence[float], limit: int) -> list[tuple[int, float]]:
        """`ranked` for a query already embedded (by this index's embedder): one query over several documents."""
        if self.index is None:
            return []
        return [(int(i), score) for i, score in self.index.ranked(vector, limit) if score > 0]

    def __len__(self) -> int:
        return len(self.passages)


class PassageIndexes:
    """The passage indexes of the documents read lately, under one embedder, so that asking about a document
    again does not embed it again (Agent Zero keeps its documents in a vector store for the same reason).
    Keyed by the document's text and the passage size, whatever it was read from; the least recently used go
    first once more than `max_passages` passages are held (a document larger than that is indexed, not kept)."""

    def __init__(self, embedder: Any, max_passages: int = 5_000) -> None:
        self.embedder = embedder
        self.max_passages = max_passages
        self._held: dict[tuple[str, int], PassageIndex] = {}  # (insertion order = use order: oldest first)
        self._lock = threading.Lock()  # (built off the event loop: two documents may be built at once)
        self.built = 0  # documents embedded so far (the rest were found here)

    def get(self, text: str, size: int) -> PassageIndex:
        """The index of `text` cut into passages of about `size` characters: held, or embedded now."""
        key = (hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), size)
        with self._lock:
            found = self._held.pop(key, None)
            if found is not None:
                self._held[key] = found
                return found
        from a0nb.engine.memory.knowledge import chunk_text

        index = PassageIndex(chunk_text(text, size), self.embedder)
        with self._lock:
            self.built += 1
            if len(index) <= self.max_passages:
                self._held[key] = index
                held = sum(len(i) for i in self._held.values())
                while held > self.max_passages:
                    held -= len(self._held.pop(next(iter(self._held))))
        return index

    def __len__(self) -> int:
        return len(self._held)
