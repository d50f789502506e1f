from a0nb import Extension


class A(Extension):
    async def execute(self, **kwargs):
        return None
