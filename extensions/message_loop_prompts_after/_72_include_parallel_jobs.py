"""extras_temporary["parallel_jobs"]: status of tool jobs running in the background (only when there are any)."""
from a0nb.ext import Extension, extra_text


class IncludeParallelJobs(Extension):
    def execute(self, loop_data=None, **kwargs):
        jobs = self.agent.jobs.snapshot()
        if not jobs:
            return
        lines = "\n".join(f"- {j.id} {j.tool}: {j.status}" + (f" — {j.note}" if j.note else "") for j in jobs)
        loop_data.extras_temporary["parallel_jobs"] = extra_text(self.agent, "agent.extras.parallel_jobs.md", jobs=lines)
