"""The `memory_load` tool (Agent Zero's name and arguments): search long-term memory by similarity."""
from a0nb.ext import EmbeddingError, FilterError, Response, Tool, memories_of


def _number(value, default, kind):
    try:
        return kind(value) if value not in (None, "") else default
    except (TypeError, ValueError):
        return default


class MemoryLoad(Tool):
    description = "Search long-term memory."
    parameters = {"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string"}, "threshold": {"type": "number", "description": "0-1, default 0.7"},
        "limit": {"type": "integer", "description": "default 10"},
        "filter": {"type": "string", "description": "condition on metadata, e.g. area == 'main'"}}}

    async def execute(self, query="", threshold=0.7, limit=10, filter="", **kwargs):
        query = str(query or "").strip()
        if not query:
            return Response(message="memory_load needs a `query`.")
        threshold, limit = _number(threshold, 0.7, float), max(1, _number(limit, 10, int))
        try:
            found = memories_of(self.agent).search(query, limit=limit, threshold=threshold, filter=str(filter or ""))
        except (EmbeddingError, FilterError) as exc:
            return Response(message=f"memory_load failed: {exc}")
        if not found:
            return Response(message=self.agent.read_prompt("fw.memories_not_found.md", query=query,
                                                           threshold=threshold).strip())
        return Response(message="\n\n".join(m.render() for m in found))
