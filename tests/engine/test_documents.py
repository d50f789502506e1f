"""Documents as text (a0nb/engine/documents.py, what Agent Zero's document_query stands on): local files by
path or file:// URI, http(s) from a loopback server, HTML without markup, PDF through pypdf; bounded reads;
ranking passages with an embedder."""
from __future__ import annotations

import http.server
import os
import threading
from pathlib import Path
from typing import Iterator

import pytest

from a0nb.engine import documents
from a0nb.engine.documents import DocumentError, PassageIndexes, rank_passages, read_document
from a0nb.engine.memory import HashEmbedder


def pdf_with(text: str) -> bytes:
    """A one-page PDF showing `text` in Helvetica (built here: no PDF writer is needed)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


HTML = b"""<!doctype html><html><head><title>Q3</title><style>p {color: red}</style>
<script>var secret = 1;</script></head><body><h1>Quarterly report</h1><p>Revenue &amp; costs grew.</p>
<ul><li>North: 120</li><li>South: 95</li></ul></body></html>"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """A loopback HTTP server for `tmp_path/site`, stopped after the test."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "page.html").write_bytes(HTML)
    (site / "notes.txt").write_text("plain notes from the web")
    (site / "report.pdf").write_bytes(pdf_with("Remote revenue grew 7 percent"))
    (site / "data.bin").write_text("text served as octet-stream")  # (.bin: the server says application/octet-stream)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            super().__init__(*args, directory=str(site), **kwargs)

        def log_message(self, *args):  # type: ignore[no-untyped-def]
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_local_text_by_relative_path_absolute_path_and_file_uri(nb: Path) -> None:
    (nb / "notes.md").write_text("# Notes\nrows: 1,204\n")
    assert read_document("notes.md", nb) == "# Notes\nrows: 1,204\n"
    assert read_document(str(nb / "notes.md"), Path("/")) == "# Notes\nrows: 1,204\n"
    assert read_document(f"file://{nb / 'notes.md'}", Path("/")) == "# Notes\nrows: 1,204\n"


def test_html_is_read_without_markup_scripts_or_styles(nb: Path) -> None:
    (nb / "page.html").write_bytes(HTML)
    text = read_document("page.html", nb)
    assert text == "Quarterly report\n\nRevenue & costs grew.\n\nNorth: 120\n\nSouth: 95"
    assert "secret" not in text and "color" not in text and "Q3" not in text


def test_pdf_text_is_extracted(nb: Path) -> None:
    (nb / "report.pdf").write_bytes(pdf_with("Revenue grew 12 percent in 2025"))
    assert read_document("report.pdf", nb) == "Revenue grew 12 percent in 2025"


def test_a_pdf_without_pypdf_says_how_to_get_it(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (nb / "report.pdf").write_bytes(pdf_with("x"))
    monkeypatch.setitem(__import__("sys").modules, "pypdf", None)  # (import pypdf now raises ImportError)
    with pytest.raises(DocumentError, match=r"report.pdf: reading a PDF needs pypdf \(pip install 'a0nb\[documents\]'\)"):
        read_document("report.pdf", nb)


def test_http_documents_from_a_loopback_server(server: str, nb: Path) -> None:
    assert read_document(f"{server}/notes.txt", nb) == "plain notes from the web"
    assert "North: 120" in read_document(f"{server}/page.html", nb)
    assert read_document(f"{server}/report.pdf", nb) == "Remote revenue grew 7 percent"
    assert read_document(f"{server}/data.bin", nb) == "text served as octet-stream"
    with pytest.raises(DocumentError, match=r"/missing.txt: could not be fetched \(HTTP Error 404"):
        read_document(f"{server}/missing.txt", nb)


@pytest.mark.parametrize("case", ["missing", "folder", "fifo", "binary", "large", "scheme", "image"])
def test_what_cannot_be_read_is_a_clear_error(nb: Path, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    (nb / "sub").mkdir()
    os.mkfifo(nb / "fifo")
    (nb / "blob.dat").write_bytes(b"\x00\x01\x02\xff" * 10)
    (nb / "big.txt").write_text("x" * 50)
    (nb / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    monkeypatch.setattr(documents, "MAX_BYTES", 40)
    uri, message = {"missing": ("nope.txt", "no such file"), "folder": ("sub", "no such file"),
                    "fifo": ("fifo", "no such file"), "binary": ("blob.dat", "a binary file cannot be read"),
                    "large": ("big.txt", "larger than 40 bytes"), "scheme": ("ftp://host/x.txt", "unsupported scheme"),
                    "image": ("pic.png", "image/png cannot be read as text")}[case]
    with pytest.raises(DocumentError, match=message) as info:
        read_document(uri, nb)
    assert uri.rsplit("/", 1)[-1] in str(info.value)  # the message names the document


def test_ranking_puts_the_passage_that_answers_first() -> None:
    passages = ["The office cat is called Miso and sleeps all day.",
                "Quarterly revenue in the north region was 120 thousand euros.",
                "The parking garage closes at nine in the evening."]
    embedder = HashEmbedder()
    assert rank_passages(passages, "north region revenue", embedder, limit=1) == [1]
    assert rank_passages(passages, "when does the parking garage close", embedder)[0] == 2
    assert rank_passages([], "x", embedder) == [] and rank_passages(passages, " ", embedder) == []


class CountingEmbedder(HashEmbedder):
    """The lexical embedder, counting the texts it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.texts = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += len(texts)
        return super().embed(texts)


def test_a_document_is_embedded_once_and_ranked_for_any_number_of_queries() -> None:
    embedder = CountingEmbedder()
    indexes = PassageIndexes(embedder)
    text = "\n\n".join(["The office cat sleeps on the printer."] * 30 + ["North region revenue was 120."])
    index = indexes.get(text, 200)
    assert embedder.texts == len(index) > 5 and indexes.built == 1
    best = index.ranked("north region revenue", 1)
    assert index.passages[best[0][0]].endswith("North region revenue was 120.") and best[0][1] > 0
    index.ranked("office cat", 3)
    assert embedder.texts == len(index) + 2  # one embedding a query
    assert indexes.get(text, 200) is index and embedder.texts == len(index) + 2  # held: not embedded again
    assert indexes.get(text, 500) is not index and indexes.built == 2  # another passage size, another index


def test_the_least_recently_used_documents_go_first_beyond_the_bound() -> None:
    indexes = PassageIndexes(CountingEmbedder(), max_passages=6)
    a, b, c = ("\n\n".join(f"{name} passage {i} " + "words " * 30 for i in range(3)) for name in "abc")
    first = indexes.get(a, 300)
    assert len(first) == 3 and indexes.get(b, 300) and len(indexes) == 2
    indexes.get(a, 300)  # a is used again: b is now the oldest
    indexes.get(c, 300)
    assert len(indexes) == 2 and indexes.get(a, 300) is first and indexes.built == 3
    huge = "\n\n".join(f"passage {i} " + "words " * 30 for i in range(10))
    assert len(indexes.get(huge, 300)) == 10 and len(indexes) == 2  # indexed, not kept
