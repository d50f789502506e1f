"""The `response` tool: the final answer of a turn; ends the loop. The answer stays in history
inside the AI message that called it, so nothing else is added."""
from a0nb.ext import Response, Tool


class ResponseTool(Tool):
    description = "Answer the user and end the turn."
    parameters = {"type": "object", "properties": {"text": {"type": "string", "description": "the answer, in Markdown"}},
                  "required": ["text"]}

    async def execute(self, **kwargs):
        text = self.args.get("text")
        if text is None:
            text = self.args.get("message", "")
        return Response(message=str(text), break_loop=True)

    async def after_execution(self, response, **kwargs):
        return None
