"""After a monologue (setting `memory_memorize`), the utility model extracts problems solved and how,
into the `solutions` area."""
from a0nb.ext import Extension, memorize


class MemorizeSolutions(Extension):
    async def execute(self, loop_data=None, **kwargs):
        await memorize(self.agent, "solutions", "memory.memorize_solutions.sys.md")
