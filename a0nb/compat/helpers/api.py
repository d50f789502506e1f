"""Agent Zero's `helpers.api`: the base of web API handlers. A notebook serves no HTTP API, so handlers
can be imported and called directly (`await handler.process(input, request)`), never routed."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Input = dict[str, Any]
Output = dict[str, Any]


@dataclass
class Request:
    """The part of a web request a handler reads: JSON body, query arguments, headers."""

    json: dict[str, Any] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    method: str = "POST"

    def get_json(self, silent: bool = True) -> dict[str, Any]:
        return self.json


@dataclass
class Response:
    response: Any = ""
    status: int = 200
    mimetype: str = "application/json"


class ApiHandler:
    def __init__(self, app: Any = None, thread_lock: Any = None) -> None:
        self.app = app
        self.thread_lock = thread_lock

    @classmethod
    def requires_loopback(cls) -> bool:
        return False

    @classmethod
    def requires_api_key(cls) -> bool:
        return False

    @classmethod
    def requires_auth(cls) -> bool:
        return True

    @classmethod
    def requires_csrf(cls) -> bool:
        return cls.requires_auth()

    @classmethod
    def get_methods(cls) -> list[str]:
        return ["POST"]

    async def process(self, input: Input, request: Request) -> Output | Response:
        raise NotImplementedError(f"{type(self).__name__}.process")

    def use_context(self, ctxid: str, create_if_not_exists: bool = True) -> Any:
        from a0nb.compat.agent import AgentContext
        context = AgentContext.get(ctxid) if ctxid else None
        if context is None and create_if_not_exists:
            context = AgentContext(id=ctxid or None)
        return context


def register_watchdogs() -> None:
    """Nothing to register: a notebook routes no API handlers."""
