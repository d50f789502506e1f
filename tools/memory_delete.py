"""The `memory_delete` tool (Agent Zero's name and arguments): delete memories by id."""
from a0nb.ext import Response, Tool, memories_of


class MemoryDelete(Tool):
    description = "Delete memories by id."
    parameters = {"type": "object", "required": ["ids"], "properties": {
        "ids": {"type": "string", "description": "comma-separated memory ids"}}}

    async def execute(self, ids="", **kwargs):
        wanted = ids if isinstance(ids, list) else str(ids or "").replace(";", ",").split(",")
        wanted = [str(i).strip() for i in wanted if str(i).strip()]
        if not wanted:
            return Response(message="memory_delete needs `ids` (comma-separated, as memory_load shows them).")
        deleted = memories_of(self.agent).delete(wanted)
        return Response(message=self.agent.read_prompt("fw.memories_deleted.md", memory_count=len(deleted),
                                                       ids=", ".join(deleted)).strip())
