"""An extension of the `_example` profile at the `message_loop_prompts_after` point.

Owns one temporary EXTRAS entry, added on every loop pass, to show how extensions feed the prompt.
"""

from __future__ import annotations

from typing import Any

from a0nb.ext import Extension

NOTE = "This agent uses the _example profile; its EXTRAS note comes from _80_example_note.py."


class ExampleNote(Extension):
    """Adds a one-line note to the extras of every model call."""

    async def execute(self, loop_data: Any = None, **kwargs: Any) -> None:
        # Temporary extras are cleared after each call, so the note is set again on every pass.
        loop_data.extras_temporary["example_note"] = NOTE
