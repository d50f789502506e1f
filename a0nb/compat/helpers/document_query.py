"""Agent Zero's `helpers.document_query`: what its `document_query` tool calls.

`document_get_content(uri)` is the document's text (a path from the notebook folder, file://, http(s); plain
text, HTML, PDF: a0nb.ext.read_document). `document_qa(uris, questions)` splits the documents into passages,
ranks them against each question with the memory's embedder (each document is embedded once a chat, as
upstream's FAISS store keeps it), and has the utility model answer from the best ones, as a recorded utility call
(purpose "document query"; upstream uses the chat model outside its loop, which a0nb records only as the
loop's own call). With no utility model the passages themselves are the result, for the agent to read."""
from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Sequence

from a0nb.ext import PassageIndex, memories_of, read_document

__all__ = ["DocumentQueryHelper"]

PASSAGES_PER_QUERY = 8
PASSAGE_CHARS = 1000  # (upstream's chunk size)


class DocumentQueryHelper:
    def __init__(self, agent: Any, progress_callback: Callable[[str], None] | None = None) -> None:
        self.agent = agent
        self.engine = getattr(agent, "_engine", agent)  # (the a0nb agent behind an upstream view)
        self.progress_callback = progress_callback or (lambda _message: None)

    async def document_get_content(self, document_uri: str, add_to_db: bool = False) -> str:
        self.progress_callback(f"Reading {document_uri}")
        self.engine.checkpoint(None)
        return await asyncio.to_thread(read_document, document_uri, self.engine.workdir)

    async def document_qa(self, document_uris: Sequence[str], questions: Sequence[str]) -> tuple[bool, str]:
        self.progress_callback(f"Reading {len(document_uris)} document(s) for {len(questions)} question(s)")
        texts = await asyncio.gather(*[self.document_get_content(uri) for uri in document_uris])
        indexes = memories_of(self.engine).documents  # (a document asked about again is not embedded again)
        found = await asyncio.gather(*[asyncio.to_thread(indexes.get, text, PASSAGE_CHARS) for text in texts])
        chosen: dict[tuple[int, int], None] = {}  # (document, passage), in the order found: best for the first question first
        for question in questions:
            self.engine.checkpoint(None)
            query = await self._search_query(question)
            self.progress_callback(f"Searching for: {query}")
            chosen.update(dict.fromkeys(await asyncio.to_thread(_best, found, query, PASSAGES_PER_QUERY)))
        if not chosen:
            return False, (f"No passage of {json.dumps(list(document_uris))} matches the queries "
                           f"{json.dumps(list(questions))}")
        content = "\n\n----\n\n".join(found[d].passages[p] for d, p in chosen)
        listed = "\n".join(f" *  {q}" for q in questions)
        self.progress_callback(f"Answering from {len(chosen)} passage(s)")
        answer = await self.engine.call_utility_model(self.engine.read_prompt("fw.document_query.system_prompt.md"),
                                                      f"# Document:\n{content}\n\n# Queries:\n{listed}",
                                                      purpose="document query")
        if answer is None:
            return True, ("No utility model is configured, so these are the passages most relevant to the "
                          f"queries, for you to answer from:\n\n{content}")
        return True, str(answer)

    async def _search_query(self, question: str) -> str:
        """The question as a search query, rewritten by the utility model when there is one."""
        rewritten = await self.engine.call_utility_model(
            self.engine.read_prompt("fw.document_query.optmimize_query.md"), f'Search Query: "{question}"',
            purpose="document query: search terms")
        if rewritten is None:
            return question
        return str(rewritten).strip() or question


def _best(indexes: Sequence[PassageIndex], query: str, limit: int) -> list[tuple[int, int]]:
    """(document, passage) of the `limit` passages closest to `query` over all the documents, best first (the
    query embedded once: the documents share the chat's embedder)."""
    if not indexes or not query.strip():
        return []
    vector = indexes[0].embedder.embed([query])[0]
    scored = [(score, d, p) for d, index in enumerate(indexes) for p, score in index.nearest(vector, limit)]
    scored.sort(key=lambda t: -t[0])
    return [(d, p) for _score, d, p in scored[:limit]]
