"""Helpers for scripted conversations (tests, teaching notebooks, golden trajectories)."""
from __future__ import annotations

import json
from typing import Any


def tool_reply(tool: str, thoughts: str | None = None, headline: str | None = None, **args: Any) -> str:
    """The raw text of a model reply that calls `tool` with `args`."""
    return json.dumps({"thoughts": [thoughts or f"I will use {tool}."], "headline": headline or f"Using {tool}",
                       "tool_name": tool, "tool_args": args}, ensure_ascii=False)


def answer(text: str) -> str:
    """A reply that ends the turn with `text`."""
    return tool_reply("response", thoughts="I can answer now.", headline="Answering", text=text)
