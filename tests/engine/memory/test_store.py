"""MemoryStore: insert, search (threshold, limit, filter, areas), delete, persistence, corrupt database,
embedding-model change; the three index backends agree."""
from __future__ import annotations

from pathlib import Path

import pytest

from a0nb.diagnostics import Diagnostics
from a0nb.engine.memory import FilterError, HashEmbedder, MemoryStore
from a0nb.engine.memory.embeddings import MiniLMEmbedder, make_embedder, minilm_files
from a0nb.engine.memory.filter import compile_filter
from a0nb.engine.memory.index import available_backends, make_index

FACTS = ["The user prefers green tea over coffee.", "The staging server runs Ubuntu 24.04 in Frankfurt.",
         "Quarterly reports are due on the fifth working day.", "The cat is called Miso."]


def test_search_threshold_limit_filter_and_areas(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, HashEmbedder())
    ids = store.insert(FACTS, "main", [{"topic": "drinks"}, {"topic": "infra"}, {"topic": "work"}, {"topic": "pets"}])
    [sol] = store.insert(["# Problem\nstaging server disk full\n# Solution\nprune docker images"], "solutions")
    hits = store.search("which server is used for staging", limit=2, areas=("main",))
    assert hits[0].id == ids[1] and hits[0].score is not None and len(hits) == 2
    assert store.search("staging server", limit=5, areas=("solutions",))[0].id == sol
    assert [m.id for m in store.search("staging server", limit=5, filter="topic == 'infra'")] == [ids[1]]
    assert store.search("staging server", limit=5, threshold=0.99) == []
    with pytest.raises(FilterError, match="not a valid condition"):
        store.search("x", filter="topic ==")
    with pytest.raises(FilterError, match="Subscript|calls"):
        store.search("x", filter="__import__('os').system('true')")


def test_same_text_same_id_delete_and_persistence(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, HashEmbedder())
    first = store.insert(FACTS[:2])
    assert store.insert(FACTS[:1]) == first[:1] and len(store) == 2
    assert store.delete([first[0], "nope"]) == [first[0]]
    store.close()
    again = MemoryStore(tmp_path, HashEmbedder())
    assert [m.text for m in again.all()] == [FACTS[1]]
    assert again.get(first[1]).provenance() == f"id {first[1]}, area main"


def test_unknown_area_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="main, fragments, solutions"):
        MemoryStore(tmp_path, HashEmbedder()).insert(["x"], "instruments")


def test_corrupt_database_is_set_aside_with_a_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "memory.sqlite").write_bytes(b"this is not sqlite at all" * 100)
    diags = Diagnostics()
    store = MemoryStore(tmp_path, HashEmbedder(), diags)
    store.insert(["fresh start"])
    assert [m.text for m in store.all()] == ["fresh start"]
    [d] = diags.of("memory")
    assert "unreadable" in d.message and "memory.sqlite.corrupt-1" in d.message
    assert (tmp_path / "memory.sqlite.corrupt-1").read_bytes().startswith(b"this is not")


def test_model_change_reembeds_and_reports(tmp_path: Path) -> None:
    MemoryStore(tmp_path, HashEmbedder(256)).insert(FACTS)
    changes = []
    store = MemoryStore(tmp_path, HashEmbedder(512), on_model_change=lambda old, new: changes.append((old, new)))
    assert store.search("what is the cat's name", limit=1)[0].text == FACTS[3]
    assert changes == [("hash-256", "hash-512")]


def test_filter_language() -> None:
    meta = {"area": "main", "source_file": ".a0proj/knowledge/a.md", "n": 3}
    assert compile_filter("area == 'main' and source_file.startswith('.a0proj')")(meta)
    assert compile_filter("n > 2 and not area in ['solutions']")(meta)
    assert not compile_filter("missing == 'x'")(meta)
    assert compile_filter("")(meta)
    assert not compile_filter("n > 'a'")(meta)  # a type mismatch is False, not an error


@pytest.mark.parametrize("backend", available_backends())
def test_backends_rank_alike(backend: str) -> None:
    emb = HashEmbedder(64)
    texts = [f"memory number {i} about topic {i % 7}" for i in range(60)]
    index = make_index(64, backend)
    index.add([str(i) for i in range(60)], emb.embed(texts))
    index.remove(["3"])
    reference = make_index(64, "python")
    reference.add([str(i) for i in range(60) if i != 3], emb.embed([t for i, t in enumerate(texts) if i != 3]))
    q = emb.embed(["topic 3"])[0]
    got, want = index.ranked(q, 5), reference.ranked(q, 5)
    assert [round(s, 4) for _, s in got] == [round(s, 4) for _, s in want] and len(index) == 59


def test_embedder_specs() -> None:
    assert make_embedder("hash").name == "hash-512" and make_embedder("hash-128").dim == 128
    with pytest.raises(Exception, match="litellm model id"):
        make_embedder("nonsense")
    assert make_embedder("openai/text-embedding-3-small").name == "openai/text-embedding-3-small"


@pytest.mark.skipif(minilm_files() is None, reason="a0nb[memory] is not installed")
def test_offline_minilm_is_semantic(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, MiniLMEmbedder())
    store.insert(FACTS)
    [hit] = store.search("what does the user like to drink?", limit=1, threshold=0.3)
    assert hit.text == FACTS[0]
    [pet] = store.search("name of their kitten", limit=1, threshold=0.3)
    assert pet.text == FACTS[3]
    assert make_embedder("local").name == "all-MiniLM-L6-v2-int8"


def test_unreadable_rows_are_reembedded_from_their_text(tmp_path: Path) -> None:
    """A torn vector, a vector of the wrong size and metadata that is not JSON: the index is rebuilt from the
    memories' text with a diagnostic, and every memory (text, id, area) is still there and found."""
    import sqlite3
    ids = MemoryStore(tmp_path, HashEmbedder()).insert(FACTS, "main", [{"topic": t} for t in "abcd"])
    db = sqlite3.connect(str(tmp_path / "memory.sqlite"))
    db.execute("UPDATE memories SET vec = ? WHERE id = ?", (b"\x00\x01\x02", ids[0]))
    db.execute("UPDATE memories SET vec = ? WHERE id = ?", (b"\x00" * 16, ids[1]))
    db.execute("UPDATE memories SET meta = ? WHERE id = ?", ("{not json", ids[3]))
    db.commit()
    db.close()
    diags = Diagnostics()
    store = MemoryStore(tmp_path, HashEmbedder(), diags)
    assert sorted(m.id for m in store.all()) == sorted(ids)
    assert store.search("what does the user like to drink", limit=1)[0].id == ids[0]
    assert store.search("the cat is called", limit=1)[0].id == ids[3]
    assert store.get(ids[2]).meta["topic"] == "c" and store.get(ids[3]).meta == {"id": ids[3], "area": "main"}
    [d] = diags.of("memory")
    assert "3 memories had an unreadable vector or metadata" in d.message and "nothing was dropped" in d.message
    store.close()
    again = Diagnostics()
    assert len(MemoryStore(tmp_path, HashEmbedder(), again)) == 4 and not list(again)  # repaired on disk
