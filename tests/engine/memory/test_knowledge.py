"""Knowledge import: incremental by checksum, areas from subfolders, formats, bad files reported."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from a0nb.diagnostics import Diagnostics
from a0nb.engine.memory import HashEmbedder, MemoryStore, import_knowledge
from a0nb.engine.memory.knowledge import MAX_FILE_BYTES, chunk_text


def test_incremental_import(tmp_path: Path) -> None:
    kn = tmp_path / "knowledge"
    (kn / "solutions").mkdir(parents=True)
    (kn / "notes.md").write_text("# Deploy\n\nWe deploy with `make ship` on Fridays.")
    (kn / "solutions" / "disk.txt").write_text("Disk full on staging: prune docker images.")
    (kn / "people.csv").write_text("name,role\nAda,lead\nBob,ops\n")
    (kn / "cfg.json").write_text(json.dumps({"region": "eu-central-1"}))
    store, diags = MemoryStore(tmp_path / "mem", HashEmbedder()), Diagnostics()
    first = import_knowledge(store, [(kn, "knowledge")], diags)
    assert sorted(first.added) == ["knowledge/cfg.json", "knowledge/notes.md", "knowledge/people.csv",
                                   "knowledge/solutions/disk.txt"]
    areas = {m.meta["source_file"]: m.area for m in store.all()}
    assert areas["knowledge/solutions/disk.txt"] == "solutions" and areas["knowledge/notes.md"] == "main"
    assert any("name: Ada; role: lead" in m.text for m in store.all())
    again = import_knowledge(store, [(kn, "knowledge")], diags)
    assert not again.changed and again.unchanged == 4
    (kn / "notes.md").write_text("We deploy with `make release` now.")
    (kn / "cfg.json").unlink()
    third = import_knowledge(store, [(kn, "knowledge")], diags)
    assert third.updated == ["knowledge/notes.md"] and third.removed == ["knowledge/cfg.json"]
    texts = [m.text for m in store.all()]
    assert any("make release" in t for t in texts) and not any("make ship" in t for t in texts)
    assert not any("eu-central-1" in t for t in texts)
    assert not list(diags)


def test_bad_files_are_reported_and_skipped(tmp_path: Path) -> None:
    kn = tmp_path / "knowledge"
    kn.mkdir()
    (kn / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (kn / "big.txt").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    (kn / "ok.md").write_text("fine")
    locked = kn / "locked.md"
    locked.write_text("secret")
    locked.chmod(0)
    store, diags = MemoryStore(tmp_path / "mem", HashEmbedder()), Diagnostics()
    try:
        report = import_knowledge(store, [(kn, "knowledge")], diags)
    finally:
        locked.chmod(0o644)
    assert "knowledge/ok.md" in report.added
    messages = {Path(d.path).name: d.message for d in diags.of("memory")}
    assert "not UTF-8" in messages["latin1.txt"] and "over the" in messages["big.txt"]
    if os.geteuid() != 0:  # root reads everything
        assert "unreadable" in messages["locked.md"]


def test_a_file_even_root_cannot_read_is_reported(tmp_path: Path) -> None:
    """/proc/self/mem is a regular file that fails with EIO when read from offset 0, for root too."""
    if not Path("/proc/self/mem").exists():
        pytest.skip("no /proc")
    kn = tmp_path / "knowledge"
    kn.mkdir()
    (kn / "ok.md").write_text("fine")
    (kn / "memdump.txt").symlink_to("/proc/self/mem")
    store, diags = MemoryStore(tmp_path / "mem", HashEmbedder()), Diagnostics()
    report = import_knowledge(store, [(kn, "knowledge")], diags)
    assert report.added == ["knowledge/ok.md"]
    [d] = diags.of("memory")
    assert Path(d.path).name == "memdump.txt" and "knowledge file unreadable" in d.message


def test_chunking() -> None:
    text = "\n\n".join(f"paragraph {i} " + "word " * 50 for i in range(30))
    chunks = chunk_text(text, 600)
    assert all(len(c) <= 600 for c in chunks) and len(chunks) > 5
    assert "".join(chunks).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(" ", "")
    long = "a" * 2000
    assert [len(c) for c in chunk_text(long, 600)] == [600, 600, 600, 200]


@pytest.mark.parametrize("name", ["doc.pdf"])
def test_pdf_without_reader_is_reported(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)  # (as if it were not installed: importing it fails)
    kn = tmp_path / "knowledge"
    kn.mkdir()
    (kn / name).write_bytes(b"%PDF-1.4 ...")
    diags = Diagnostics()
    import_knowledge(MemoryStore(tmp_path / "m", HashEmbedder()), [(kn, "knowledge")], diags)
    assert "pypdf" in diags.of("memory")[0].message


def test_pdf_knowledge_is_imported_with_its_text(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parents[1]))
    from test_documents import pdf_with

    kn = tmp_path / "knowledge"
    kn.mkdir()
    (kn / "report.pdf").write_bytes(pdf_with("Revenue grew 12 percent in 2025"))
    (kn / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    store, diags = MemoryStore(tmp_path / "m", HashEmbedder()), Diagnostics()
    report = import_knowledge(store, [(kn, "knowledge")], diags)
    assert report.added == ["knowledge/report.pdf"]
    assert any("Revenue grew 12 percent in 2025" in m.text for m in store.all())
    [d] = diags.of("memory")
    assert Path(d.path).name == "broken.pdf" and d.message.startswith("PDF unreadable: broken.pdf: the PDF could not")
