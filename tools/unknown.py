"""The fallback for a tool name found nowhere: tells the model which tools exist; the loop goes on."""
from a0nb.ext import Response, Tool


class Unknown(Tool):
    async def execute(self, **kwargs):
        tools = self.agent.tools.available()
        listing = "\n".join(f"- {name}" + (f": {info.description}" if info.description else "")
                            for name, info in tools.items())
        text = self.agent.read_prompt("fw.tool_not_found.md", tool_name=self.name, tools_prompt=listing)
        return Response(message=text)
