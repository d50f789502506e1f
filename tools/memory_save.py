"""The `memory_save` tool (Agent Zero's name and arguments): store a text in long-term memory."""
from a0nb.ext import MEMORY_AREAS, EmbeddingError, Response, Tool, memories_of


class MemorySave(Tool):
    description = "Save a text to long-term memory."
    parameters = {"type": "object", "required": ["text"], "properties": {
        "text": {"type": "string"}, "area": {"type": "string", "enum": list(MEMORY_AREAS)}},
        "additionalProperties": True}

    async def execute(self, text="", area="main", **kwargs):
        text = str(text or "").strip()
        if not text:
            return Response(message="memory_save needs a non-empty `text`.")
        area = str(area or "main").strip().lower()
        if area not in MEMORY_AREAS:
            return Response(message=f"memory_save: unknown area {area!r}; use one of {', '.join(MEMORY_AREAS)}.")
        meta = {k: v for k, v in kwargs.items() if isinstance(v, (str, int, float, bool))}
        try:
            memory_id = memories_of(self.agent).save(text, area, **meta)
        except EmbeddingError as exc:
            return Response(message=f"memory_save failed: {exc}")
        return Response(message=self.agent.read_prompt("fw.memory_saved.md", memory_id=memory_id, area=area).strip())
