"""Before the prompt is built: compact history when it is over budget (awaited, so runs stay deterministic)."""
from a0nb.ext import Extension
from a0nb.ext import organize_history


class OrganizeHistory(Extension):
    async def execute(self, loop_data=None, **kwargs):
        await organize_history(self.agent)
