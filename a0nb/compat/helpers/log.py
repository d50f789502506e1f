"""Agent Zero's `helpers.log`: the context's log of items (agent steps, tools, warnings, errors) that
upstream extensions and tools write to. Items are kept on the context (`context.log.logs`); every new or
updated item is reported to the context, which puts warnings, errors, hints and infos into the record of
the model call they happened during (the live view's call card and `%a0 inspect` show them)."""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

Type = Literal["agent", "browser", "code_exe", "error", "hint", "info", "progress", "response", "tool",
               "input", "user", "util", "warning", "subagent", "mcp"]


@dataclass
class LogItem:
    log: "Log"
    no: int
    type: str
    heading: str = ""
    content: str = ""
    kvps: dict[str, Any] | None = None
    temp: bool = False
    id: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def update(self, type: str | None = None, heading: str | None = None, content: str | None = None,
               kvps: dict[str, Any] | None = None, temp: bool | None = None, **kwargs: Any) -> None:
        if type is not None:
            self.type = type
        if heading is not None:
            self.heading = heading
        if content is not None:
            self.content = content
        if kvps is not None:
            self.kvps = dict(kvps)
        if temp is not None:
            self.temp = temp
        self.extra.update(kwargs)
        self.log._changed(self, False)

    def stream(self, heading: str | None = None, content: str | None = None, **kwargs: Any) -> None:
        self.update(heading=(self.heading + heading) if heading else None,
                    content=(self.content + content) if content else None, **kwargs)

    def output(self) -> dict[str, Any]:
        return {"no": self.no, "id": self.id, "type": self.type, "heading": self.heading, "content": self.content,
                "kvps": self.kvps, "temp": self.temp, **self.extra}


class Log:
    """One context's log; `on_change` (set by the context) hears every new or updated item."""

    def __init__(self, on_change: Callable[[LogItem, bool], None] | None = None) -> None:
        self.guid = str(uuid.uuid4())
        self.logs: list[LogItem] = []
        self.progress = ""
        self.progress_no = 0
        self.progress_active = False
        self.on_change = on_change

    def log(self, type: str, heading: str | None = None, content: str | None = None,
            kvps: dict[str, Any] | None = None, temp: bool | None = None, update_progress: str | None = None,
            id: str | None = None, **kwargs: Any) -> LogItem:
        item = LogItem(self, len(self.logs), type, heading or "", content or "", dict(kvps) if kvps else None,
                       bool(temp), id or "", dict(kwargs))
        self.logs.append(item)
        if heading and update_progress != "none":
            self.set_progress(heading, item.no)
        self._changed(item, True)
        return item

    def set_progress(self, progress: str, no: int = 0, active: bool = True) -> None:
        self.progress, self.progress_no, self.progress_active = progress, no, active

    def set_initial_progress(self) -> None:
        self.set_progress("Waiting for input", 0, False)

    def reset(self) -> None:
        self.guid = str(uuid.uuid4())
        self.logs.clear()
        self.set_progress("")

    def output(self, start: int = 0, end: int | None = None) -> list[dict[str, Any]]:
        return [item.output() for item in self.logs[start:end]]

    def _changed(self, item: LogItem, new: bool) -> None:
        if self.on_change is not None:
            self.on_change(item, new)
