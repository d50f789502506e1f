"""Background tool jobs: a tool may start a job and return at once; the job's status shows in
EXTRAS (`_72_include_parallel_jobs`) and its result is delivered to history on a later step."""
from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any, Awaitable


@dataclass
class Job:
    id: str
    tool: str
    note: str = ""
    status: str = "running"  # running | done | failed | delivered
    result: str = ""
    task: "asyncio.Task[Any] | None" = field(default=None, repr=False)


class Jobs:
    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._ids = itertools.count(1)

    def start(self, tool: str, work: Awaitable[Any], note: str = "") -> Job:
        job = Job(f"job-{next(self._ids)}", tool, note)

        async def run() -> None:
            try:
                value = await work
                job.result, job.status = value if isinstance(value, str) else repr(value), "done"
            except asyncio.CancelledError:
                job.result, job.status = "cancelled", "failed"
                raise
            except Exception as exc:  # reported to the model with the job's result
                job.result, job.status = f"{type(exc).__name__}: {exc}", "failed"

        job.task = asyncio.ensure_future(run())
        self._jobs[job.id] = job
        return job

    def snapshot(self) -> list[Job]:
        if not self._jobs:  # (the usual step: no job ever started, no list made)
            return []
        return [j for j in self._jobs.values() if j.status != "delivered"]

    def finished(self) -> list[Job]:
        """Jobs whose result has not been delivered yet; marks them delivered."""
        if not self._jobs:
            return []
        out = [j for j in self._jobs.values() if j.status in ("done", "failed")]
        for j in out:
            j.status = "delivered" if j.status == "done" else j.status
            if j.status == "failed":
                j.status = "delivered"
        return out

    def cancel_all(self) -> list["asyncio.Task[Any]"]:
        """Cancel every running job (from any thread: the cancel is posted to the job's own loop)."""
        running = [j.task for j in self._jobs.values() if j.task is not None and not j.task.done()]
        for task in running:
            task.get_loop().call_soon_threadsafe(task.cancel)
        return running
