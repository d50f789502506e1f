from a0nb import Tool


class ResponseTool(Tool):
    async def execute(self, **kwargs):
        raise RuntimeError('no answers today')
