"""Agent Zero's `helpers.tool`: `Tool` with upstream's lifecycle (`before_execution` makes `self.log`,
`after_execution` adds the result to history under the bare tool name) and `Response`."""
from __future__ import annotations

import uuid
from typing import Any

from a0nb.ext import Response
from a0nb.ext import Tool as _Tool
from a0nb.compat.helpers.strings import sanitize_string

__all__ = ["Tool", "Response"]


class Tool(_Tool):
    """Base class of Agent Zero tool files; `self.agent` is the upstream view of the a0nb agent."""

    def __init__(self, agent: Any, name: str, method: str | None, args: dict[str, Any], message: str,
                 loop_data: Any = None, **kwargs: Any) -> None:
        from a0nb.compat.agent import enter
        super().__init__(enter(agent), name, method, args, message, loop_data, **kwargs)
        self.log: Any = None

    async def execute(self, **kwargs: Any) -> Response:
        raise NotImplementedError(f"tool {self.name} does not implement execute()")

    async def before_execution(self, **kwargs: Any) -> None:
        self.log = self.get_log_object()

    async def after_execution(self, response: Response, **kwargs: Any) -> None:
        text = sanitize_string(response.message.strip())
        log_id = getattr(self.log, "id", "")
        self.agent.hist_add_tool_result(self.name, text, id=log_id, **(response.additional or {}))
        if self.log is not None:
            self.log.update(content=text)

    async def set_progress(self, content: str | None) -> None:  # type: ignore[override]
        ctx = {"content": content or ""}
        engine = self.agent._engine
        await engine.fire("tool_output_update", ctx=ctx)
        self.progress = ctx["content"]

    def add_progress(self, content: str | None) -> None:
        if content:
            self.progress += content

    def get_log_object(self) -> Any:
        name = f"{self.name}:{self.method}" if self.method else self.name
        heading = f"icon://construction {self.agent.agent_name}: Using tool '{name}'"
        return self.agent.context.log.log(type="tool", heading=heading, content="", kvps=self.args,
                                          _tool_name=self.name, id=str(uuid.uuid4()))

    def nice_key(self, key: str) -> str:
        words = key.split("_")
        return " ".join([words[0].capitalize()] + [w.lower() for w in words[1:]])
