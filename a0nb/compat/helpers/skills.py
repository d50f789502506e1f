"""Agent Zero's `helpers.skills`: the agent's skills (a0nb's SKILL.md index) with upstream's fields."""
from __future__ import annotations

from typing import Any


def _engine(agent: Any) -> Any:
    if agent is None:
        from a0nb.compat.agent import current
        agent = current()
    return getattr(agent, "_engine", agent)


def list_skills(agent: Any = None, include_content: bool = False, **kwargs: Any) -> list[Any]:
    engine = _engine(agent)
    return [] if engine is None else list(engine.skills().values())


def find_skill(name: str, include_content: bool = False, agent: Any = None, **kwargs: Any) -> Any:
    from a0nb.ext import normalise_name
    wanted = normalise_name(name)
    return next((s for s in list_skills(agent) if normalise_name(s.name) == wanted), None)


def search_skills(query: str, limit: int = 25, agent: Any = None, **kwargs: Any) -> list[Any]:
    q = query.lower()
    return [s for s in list_skills(agent) if q in s.name.lower() or q in (s.description or "").lower()][:limit]
