"""Agent Zero's `helpers.cache`: named areas of cached values with their last use, trimmed by age.
Upstream's cache is process-wide; so is this one (one `Cache` on the class)."""
from __future__ import annotations

import fnmatch
import time
from typing import Any, ClassVar


class Cache:
    shared: ClassVar["Cache"]

    def __init__(self) -> None:
        self.areas: dict[str, dict[Any, tuple[float, Any]]] = {}
        self.disabled: set[str] = set()

    def add(self, area: str, key: Any, value: Any) -> None:
        if area not in self.disabled:
            self.areas.setdefault(area, {})[key] = (time.monotonic(), value)

    def get(self, area: str, key: Any, default: Any = None) -> Any:
        entry = self.areas.get(area, {}).get(key)
        if entry is None:
            return default
        self.areas[area][key] = (time.monotonic(), entry[1])
        return entry[1]

    def remove(self, area: str, key: Any) -> None:
        self.areas.get(area, {}).pop(key, None)

    def clear(self, area: str) -> None:
        for name in [a for a in self.areas if fnmatch.fnmatch(a, area)]:
            del self.areas[name]

    def trim(self, area: str, seconds: float) -> int:
        cutoff, removed = time.monotonic() - seconds, 0
        for name in [a for a in self.areas if fnmatch.fnmatch(a, area)]:
            old = [k for k, (used, _) in self.areas[name].items() if used < cutoff]
            for k in old:
                del self.areas[name][k]
            removed += len(old)
        return removed


Cache.shared = Cache()


def add(area: str, key: Any, value: Any) -> None:
    Cache.shared.add(area, key, value)


def get(area: str, key: Any, default: Any = None) -> Any:
    return Cache.shared.get(area, key, default)


def remove(area: str, key: Any) -> None:
    Cache.shared.remove(area, key)


def clear(area: str) -> None:
    Cache.shared.clear(area)


def clear_all() -> None:
    Cache.shared.areas.clear()


def trim_cache(area: str = "*", seconds: float = 300) -> int:
    return Cache.shared.trim(area, seconds)


def toggle_area(area: str, enabled: bool) -> None:
    (Cache.shared.disabled.discard if enabled else Cache.shared.disabled.add)(area)


def determine_cache_key(*parts: Any) -> str:
    return "|".join(str(id(p)) if p is not None and not isinstance(p, (str, int, float)) else str(p) for p in parts)
