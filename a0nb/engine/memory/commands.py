"""`%a0 memory` and `a0nb memory` as one function over an agent: list / search / show / delete / import,
returning plain text (the magic and the command line only print it)."""
from __future__ import annotations

import shlex
from typing import Any

from a0nb.engine.memory.memories import memories_of
from a0nb.engine.memory.store import AREAS, Memory

USAGE = ("usage: memory [list [AREA]] | search QUERY [--limit N] [--threshold T] | show ID | delete ID [ID ...] | "
         "import | recalled")


class MemoryCommandError(ValueError):
    """A malformed memory command (the message includes the usage)."""


def _line(m: Memory, width: int = 70) -> str:
    text = " ".join(m.text.split())
    text = text if len(text) <= width else text[:width - 1] + "…"
    score = f" {m.score:.2f}" if m.score is not None else ""
    source = f"  [{m.source}]" if m.source else ""
    return f"{m.id}  {m.area:<9}{score}  {text}{source}"


def memory_command(agent: Any, rest: str) -> str:
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise MemoryCommandError(f"{exc}; {USAGE}") from None
    action, args = (words[0], words[1:]) if words else ("list", [])
    memories = memories_of(agent)
    if action == "import":
        report = memories.sync()
        return str(report or memories.last_import or "knowledge: nothing to import (no knowledge files)")
    if action == "list":
        if args and args[0] not in AREAS:
            raise MemoryCommandError(f"unknown area {args[0]!r} (areas: {', '.join(AREAS)}); {USAGE}")
        memories.sync()
        rows = memories.store.all(args[0] if args else None) if memories.store.exists() else []
        head = memories.describe() + (f"; {len(rows)} in area {args[0]}" if args else "")
        return "\n".join([head] + [_line(m) for m in rows])
    if action == "recalled":
        return _recalled(agent)
    if action == "search":
        limit, threshold, query = 10, 0.0, []
        it = iter(args)
        for word in it:
            if word in ("--limit", "--threshold"):
                value = next(it, None)
                try:
                    limit, threshold = (int(value), threshold) if word == "--limit" else (limit, float(value))  # type: ignore[arg-type]
                except (TypeError, ValueError):
                    raise MemoryCommandError(f"{word} needs a number; {USAGE}") from None
            else:
                query.append(word)
        if not query:
            raise MemoryCommandError(f"search needs a query; {USAGE}")
        found = memories.search(" ".join(query), limit=limit, threshold=threshold)
        return "\n".join([f"{len(found)} memories for {' '.join(query)!r}:"] + [_line(m) for m in found])
    if action == "show":
        if len(args) != 1:
            raise MemoryCommandError(f"show needs one id; {USAGE}")
        memories.sync()
        m = memories.store.get(args[0]) if memories.store.exists() else None
        if m is None:
            raise MemoryCommandError(f"no memory with id {args[0]!r} (see: memory list)")
        meta = ", ".join(f"{k}={v}" for k, v in sorted(m.meta.items()) if k not in ("id", "area"))
        return f"{m.provenance()}\n{meta}\n\n{m.text}" if meta else f"{m.provenance()}\n\n{m.text}"
    if action == "delete":
        if not args:
            raise MemoryCommandError(f"delete needs ids; {USAGE}")
        deleted = memories.delete(args)
        missing = [a for a in args if a not in deleted]
        return f"deleted {len(deleted)}" + (f" (not found: {', '.join(missing)})" if missing else "")
    raise MemoryCommandError(f"unknown action {action!r}; {USAGE}")


def _recalled(agent: Any) -> str:
    """What recall put into the last chat call: the memories and solutions extras, with their provenance."""
    calls = [c for c in agent.calls if c.role == "chat"]
    if not calls:
        return "no model call yet"
    parts = [p for p in calls[-1].parts if p.label in ("extras: memories", "extras: solutions")]
    if not parts:
        return f"call #{calls[-1].index} recalled nothing"
    return "\n\n".join(f"call #{calls[-1].index}, {p.label} (set by {p.extension or p.source}):\n{p.text}" for p in parts)


__all__ = ["memory_command", "MemoryCommandError", "USAGE"]
