"""Agent Zero's `helpers.dirty_json`: a0nb's tolerant, streaming JSON parser with upstream's methods."""
from __future__ import annotations

import json
from typing import Any

from a0nb.ext import DirtyJson as _DirtyJson
from a0nb.ext import parse_dirty


class DirtyJson(_DirtyJson):
    def parse(self, json_string: str) -> Any:
        """Parse from scratch (`completed`: the root was explicitly closed)."""
        self.__init__(self.max_depth)  # type: ignore[misc]
        return self.feed(json_string)

    @staticmethod
    def parse_string(json_string: str) -> Any:
        return DirtyJson().parse(json_string)


def try_parse(json_string: str) -> Any:
    try:
        return json.loads(json_string)
    except (ValueError, TypeError):
        return parse_dirty(json_string)


def parse(json_string: str) -> Any:
    return DirtyJson.parse_string(json_string)


def stringify(obj: Any, **kwargs: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, **kwargs)
