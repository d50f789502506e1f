"""The `_example` profile's version of the `response` tool.

Owns nothing but a visible marker: it shows how a profile replaces a built-in tool by file name.
"""

from __future__ import annotations

from typing import Any

from a0nb.ext import Response, Tool

MARKER = "[example profile] "


class ExampleResponse(Tool):
    """Answers the user like the built-in tool, with a prefix that shows this file was used."""

    async def execute(self, **kwargs: Any) -> Response:
        # `message` is accepted too because some models use it instead of `text`.
        text = self.args.get("text") or self.args.get("message", "")
        return Response(message=MARKER + str(text), break_loop=True)
