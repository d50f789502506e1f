"""Agent Zero's `helpers.message_queue`: messages queued for a context while it works, sent in order.
In a notebook a message is the next cell, so the queue lives on the context and is sent by `send_next`."""
from __future__ import annotations

from typing import Any

DATA_KEY = "message_queue"


def get_queue(context: Any) -> list[dict[str, Any]]:
    queue = context.get_data(DATA_KEY)
    if queue is None:
        queue = []
        context.set_data(DATA_KEY, queue)
    return queue  # type: ignore[no-any-return]


def add(context: Any, text: str, attachments: list[str] | None = None, item_id: str | None = None) -> dict[str, Any]:
    item = {"id": item_id or str(len(get_queue(context))), "text": text, "attachments": attachments or []}
    get_queue(context).append(item)
    return item


def has_queue(context: Any) -> bool:
    return bool(context.get_data(DATA_KEY))


def pop_first(context: Any) -> dict[str, Any] | None:
    queue = get_queue(context)
    return queue.pop(0) if queue else None


def send_next(context: Any) -> Any:
    item = pop_first(context)
    agent = context.get_agent() if item is not None else None
    if agent is None or item is None:
        return None
    return agent._engine.ask(item["text"], attachments=item["attachments"])
