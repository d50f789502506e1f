"""Agent Zero's `helpers.update_check`: a notebook does not phone home; a0nb's version comes from pip."""
from __future__ import annotations

from typing import Any


async def check_version() -> dict[str, Any]:
    """No notification: updates of a0nb are `pip install -U a0nb` (no network call is made)."""
    return {}
