"""After a monologue (setting `memory_memorize`, off by default: two utility calls per answer), the
utility model extracts facts worth keeping into the `fragments` area."""
from a0nb.ext import Extension, memorize


class MemorizeFragments(Extension):
    async def execute(self, loop_data=None, **kwargs):
        await memorize(self.agent, "fragments", "memory.memorize_fragments.sys.md")
