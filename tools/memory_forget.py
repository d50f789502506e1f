"""The `memory_forget` tool (Agent Zero's name and arguments): delete memories similar to a query."""
from a0nb.ext import EmbeddingError, FilterError, Response, Tool, memories_of


class MemoryForget(Tool):
    description = "Delete memories similar to a query."
    parameters = {"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string"}, "threshold": {"type": "number", "description": "0-1, default 0.75"},
        "filter": {"type": "string"}}}

    async def execute(self, query="", threshold=0.75, filter="", **kwargs):
        query = str(query or "").strip()
        if not query:
            return Response(message="memory_forget needs a `query`.")
        try:
            threshold = float(threshold if threshold not in (None, "") else 0.75)
        except (TypeError, ValueError):
            threshold = 0.75
        try:
            deleted = memories_of(self.agent).forget(query, threshold=threshold, filter=str(filter or ""))
        except (EmbeddingError, FilterError) as exc:
            return Response(message=f"memory_forget failed: {exc}")
        return Response(message=self.agent.read_prompt("fw.memories_deleted.md", memory_count=len(deleted),
                                                       ids=", ".join(deleted)).strip())
