"""Agent Zero's `helpers.wait`: wait until a time, taking interventions and interrupts while waiting."""
from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from typing import Any, Callable


async def managed_wait(agent: Any, target_time: datetime, is_duration_wait: bool, log: Any = None,
                       get_heading_callback: Callable[..., str] | None = None) -> datetime:
    while True:
        now = datetime.now(timezone.utc)
        left = (target_time - now).total_seconds()
        if left <= 0:
            return target_time
        await agent.handle_intervention()
        if log is not None and get_heading_callback is not None:
            log.update(heading=get_heading_callback(f"{int(left)} s left"))
        await asyncio.sleep(min(left, 0.25))
