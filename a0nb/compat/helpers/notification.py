"""Agent Zero's `helpers.notification`: notifications kept on the context (a notebook has no toast area)."""
from __future__ import annotations

from enum import Enum
from typing import Any


class NotificationType(Enum):
    INFO = "info"
    SUCCESS = "success"
    WARNING = "warning"
    ERROR = "error"
    PROGRESS = "progress"


class NotificationPriority(Enum):
    NORMAL = 10
    HIGH = 20


class NotificationManager:
    def __init__(self, store: list[dict[str, Any]] | None = None) -> None:
        self.notifications = store if store is not None else []

    def send_notification(self, type: Any = NotificationType.INFO, priority: Any = NotificationPriority.NORMAL,
                          message: str = "", title: str = "", detail: str = "", display_time: int = 3,
                          group: str = "", **kwargs: Any) -> dict[str, Any]:
        item = {"type": getattr(type, "value", type), "priority": getattr(priority, "value", priority),
                "message": message, "title": title, "detail": detail, "display_time": display_time, "group": group}
        self.notifications.append(item)
        return item
