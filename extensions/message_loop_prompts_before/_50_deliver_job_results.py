"""Results of finished background jobs enter history as tool results before the next prompt."""
from a0nb.ext import Extension


class DeliverJobResults(Extension):
    async def execute(self, loop_data=None, **kwargs):
        for job in self.agent.jobs.finished():
            await self.agent.hist_add_tool_result(job.tool, f"[{job.id} finished] {job.result}", job=job.id)
