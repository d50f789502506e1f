import asyncio
from a0nb import Extension


class SlowAsync(Extension):
    async def execute(self, **kwargs):
        await asyncio.sleep(600)
