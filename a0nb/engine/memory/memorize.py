"""Memorising at the end of a monologue: the utility model reads the conversation and returns what to keep
(facts → `fragments`, solved problems → `solutions`); near-duplicates of stored memories are skipped."""
from __future__ import annotations

from typing import Any

from a0nb.engine.dirty_json import parse_dirty
from a0nb.engine.history import render_content
from a0nb.engine.memory.memories import memories_of

HISTORY_CHARS = 20_000   # the utility model's window is small (Agent Zero's known overflow, reference §10.1)
DUPLICATE = 0.95


def conversation_text(agent: Any) -> str:
    lines = [("AI: " if item.ai else "User: ") + render_content(item.content) for item in agent.history.output()]
    return "\n\n".join(lines)[-HISTORY_CHARS:]


def _entries(reply: str, area: str) -> list[str]:
    try:
        data = parse_dirty(reply[reply.find("["):] if "[" in reply else reply)
    except Exception:  # the utility model's reply is untrusted text; nothing parseable means nothing to keep
        return []
    if not isinstance(data, list):
        return []
    out = []
    for item in data:
        if isinstance(item, str) and item.strip():
            out.append(item.strip())
        elif area == "solutions" and isinstance(item, dict) and item.get("problem") and item.get("solution"):
            out.append(f"# Problem\n{str(item['problem']).strip()}\n# Solution\n{str(item['solution']).strip()}")
    return out


async def memorize(agent: Any, area: str, system_prompt: str) -> list[str]:
    """Ask the utility model for `area` entries and save the new ones; returns their ids."""
    if not agent.settings.memory_memorize or not agent.model_spec("utility"):
        return []
    text = conversation_text(agent)
    if not text.strip():
        return []
    reply = await agent.call_utility_model(agent.read_prompt(system_prompt), text, purpose=f"memorize {area}")
    memories = memories_of(agent)
    saved = []
    for entry in _entries(reply or "", area):
        if memories.search(entry, limit=1, threshold=DUPLICATE, areas=(area,)):
            continue
        saved.append(memories.save(entry, area, source="memorized"))
    return saved


__all__ = ["memorize", "conversation_text"]
