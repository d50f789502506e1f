from a0nb import Tool


class NothingTool(Tool):
    async def execute(self, **kwargs):
        return None
