"""Agent Zero's `helpers.localization`: local time and the user's timezone (the process's, or `TZ`)."""
from __future__ import annotations

from datetime import datetime, timezone, tzinfo
from typing import ClassVar


class Localization:
    _instance: ClassVar["Localization | None"] = None

    def __init__(self, tz: tzinfo | None = None) -> None:
        self.tz = tz or datetime.now().astimezone().tzinfo or timezone.utc

    @classmethod
    def get(cls) -> "Localization":
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def get_timezone(self) -> str:
        return str(self.tz)

    def utc_dt_to_localtime_str(self, utc_dt: datetime | None, sep: str = "T", timespec: str = "auto") -> str | None:
        if utc_dt is None:
            return None
        if utc_dt.tzinfo is None:
            utc_dt = utc_dt.replace(tzinfo=timezone.utc)
        return utc_dt.astimezone(self.tz).isoformat(sep=sep, timespec=timespec)

    def localtime_str_to_utc_dt(self, text: str | None) -> datetime | None:
        if not text:
            return None
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            return None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=self.tz)
        return dt.astimezone(timezone.utc)

    def serialize_datetime(self, dt: datetime | None) -> str | None:
        return self.utc_dt_to_localtime_str(dt)
