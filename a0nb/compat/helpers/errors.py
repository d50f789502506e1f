"""Agent Zero's `helpers.errors`. `RepairableException` is a0nb's RepairableError, so an upstream tool raising
it gets a0nb's repair path (the error goes back to the model)."""
from __future__ import annotations

import traceback

from a0nb.ext import RepairableError

RepairableException = RepairableError


class HandledException(Exception):
    """An exception already reported; it ends the loop without being reported again."""


class InterventionException(Exception):
    """The user sent a message while the agent was working."""


def error_text(e: BaseException) -> str:
    return str(e)


def format_error(e: BaseException, start_entries: int = 6, end_entries: int = 4) -> str:
    """The exception with a shortened traceback (the first and last frames), as Agent Zero shows it."""
    lines = traceback.format_exception(type(e), e, e.__traceback__)
    body = [ln for ln in lines if ln.strip()]
    if len(body) > start_entries + end_entries + 1:
        body = body[:start_entries] + ["...\n"] + body[-end_entries:]
    text = "".join(body).strip()
    return text or f"{type(e).__name__}: {e}"


def handle_error(e: BaseException) -> None:
    import asyncio
    if isinstance(e, asyncio.CancelledError):
        raise e
