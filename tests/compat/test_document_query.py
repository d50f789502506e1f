"""Agent Zero's own `tools/document_query.py` (the corpus file, unmodified) placed next to a notebook: it reads a
document (text, PDF) and answers queries about it through a0nb's `helpers.document_query` — with a utility
model (recorded calls, the best passages sent), and without one (the passages come back for the agent)."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from a0nb import Agent
from a0nb.testing import answer, tool_reply

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))
from corpus_judge import find_corpus  # noqa: E402
from test_documents import pdf_with  # noqa: E402

CORPUS = find_corpus()
pytestmark = pytest.mark.skipif(CORPUS is None, reason="the upstream corpus (shared/a0-upstream) is not here")

HASH = {"embedding_model": "hash"}  # (the lexical embedder: MiniLM's load would cost seconds a test)
FILLER = ["The office cat is called Miso and sleeps on the printer.",
          "The parking garage closes at nine in the evening on weekdays.",
          "Lunch is served in the canteen on the second floor."]


def _folder(nb: Path) -> None:
    assert CORPUS is not None
    (nb / "tools").mkdir()
    shutil.copy(CORPUS / "tools" / "document_query.py", nb / "tools" / "document_query.py")
    body = "\n\n".join(FILLER * 100 + ["Quarterly revenue in the north region was 120 thousand euros."] + FILLER * 100)
    (nb / "handbook.txt").write_text(body)
    (nb / "report.pdf").write_bytes(pdf_with("Revenue grew 12 percent in 2025"))


def _tool_result(agent: Agent, turn) -> str:  # type: ignore[no-untyped-def]
    """The tool's result as the last model call received it (the last message, before its extras)."""
    return json.loads(turn.calls[-1].messages[-1]["content"].split("\n[EXTRAS]")[0])["tool_result"]


def test_reading_documents_whole(nb: Path) -> None:
    _folder(nb)
    agent = Agent(nb, model=[tool_reply("document_query", document=["report.pdf", str(nb / "handbook.txt")]),
                             answer("read")])
    turn = agent.ask("read them")
    result = _tool_result(agent, turn)
    assert "Revenue grew 12 percent in 2025" in result and "\n\n---\n\n" in result and "office cat" in result
    assert not [d for d in agent.diagnostics if d.severity == "error"]


def test_queries_answered_by_the_utility_model_from_the_best_passages(nb: Path) -> None:
    _folder(nb)
    (nb / "utility.yaml").write_text(yaml.safe_dump(["north region quarterly revenue", "North: 120 thousand euros."]))
    agent = Agent(nb, model=[tool_reply("document_query", document="handbook.txt",
                                        queries=["What was the revenue in the north?"]), answer("done")],
                  utility_model="scripted:utility.yaml", settings=HASH)
    turn = agent.ask("ask the handbook")
    assert "North: 120 thousand euros." in _tool_result(agent, turn)
    utility = [c for c in agent.calls if c.role == "utility"]
    assert [c.purpose for c in utility] == ["document query: search terms", "document query"]
    rewrite, qa = utility
    assert 'Search Query: "What was the revenue in the north?"' in rewrite.messages[-1]["content"]
    sent = qa.messages[-1]["content"]
    assert sent.startswith("# Document:\n") and "# Queries:\n *  What was the revenue in the north?" in sent
    assert "120 thousand euros" in sent and len(sent) < len((nb / "handbook.txt").read_text()) / 3  # passages only
    assert qa.messages[0]["content"] == agent.read_prompt("fw.document_query.system_prompt.md")


def test_without_a_utility_model_the_passages_come_back(nb: Path) -> None:
    _folder(nb)
    agent = Agent(nb, model=[tool_reply("document_query", document="handbook.txt", query="north region revenue"),
                             answer("done")], settings=HASH)
    turn = agent.ask("ask the handbook")
    result = _tool_result(agent, turn)
    assert "No utility model is configured" in result and "120 thousand euros" in result
    assert not [c for c in agent.calls if c.role == "utility"]


def test_a_document_asked_about_again_is_not_embedded_again(nb: Path) -> None:
    """Several queries in one call embed the passages once, a second call on the same document not at all, and the
    best passages of two documents are ranked together."""
    _folder(nb)
    (nb / "faq.txt").write_text("\n\n".join(FILLER * 20 + ["The north office opens at eight."] + FILLER * 20))
    from a0nb.engine.memory import memories_of

    agent = Agent(nb, model=[tool_reply("document_query", document="handbook.txt",
                                        queries=["north region revenue", "office cat name"]),
                             tool_reply("document_query", document=["handbook.txt", "faq.txt"],
                                        query="north office opening hour"),
                             answer("done")], settings=HASH)
    counted: list[int] = []
    embedder = memories_of(agent).embedder
    real = embedder.embed
    embedder.embed = lambda texts: counted.append(len(texts)) or real(texts)  # type: ignore[method-assign]
    turn = agent.ask("ask the documents")
    first = json.loads(turn.calls[1].messages[-1]["content"].split("\n[EXTRAS]")[0])["tool_result"]
    assert "120 thousand euros" in first and "Miso" in first
    passages = memories_of(agent).documents
    assert passages.built == 2 and len(passages) == 2  # handbook.txt once, faq.txt once
    # the handbook's passages, then the faq's; no second handbook embedding (the rest: one query each, and the
    # memory recall's)
    handbook, faq = sorted(len(i) for i in passages._held.values())[::-1]
    assert [n for n in counted if n > 1] == [handbook, faq] and faq > 1
    assert "opens at eight" in _tool_result(agent, turn)


def test_a_document_that_cannot_be_read_is_reported_to_the_model(nb: Path) -> None:
    _folder(nb)
    agent = Agent(nb, model=[tool_reply("document_query", document="nope.pdf"), answer("done")])
    turn = agent.ask("read it")
    assert "Error processing document:" in _tool_result(agent, turn) and "nope.pdf: no such file" in _tool_result(agent, turn)
