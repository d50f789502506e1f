"""History compaction for an agent: budget from its settings, summaries from its utility model (or
deterministic truncation when there is none), templates from prompt files, `history_compacted` fired."""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from a0nb.engine.compaction import CompactionEvent, CompactionSettings, CompactionTemplates, compact
from a0nb.engine.tokens import SAFETY_FACTOR, TokenCounter, approximate_tokens

if TYPE_CHECKING:
    from a0nb.engine.agent import Agent


def templates_for(agent: "Agent") -> CompactionTemplates:
    return CompactionTemplates(
        summary_system=agent.read_prompt("fw.topic_summary.sys.md"),
        summary_message=lambda texts: agent.read_prompt("fw.topic_summary.msg.md", content="\n\n".join(texts)),
        truncation_marker=lambda n: agent.read_prompt("fw.msg_truncated.md", length=n).strip(),
        messages_summary=lambda s: agent.parse_prompt("fw.msg_summary.md", summary=s),
    )


def settings_for(agent: "Agent", force: bool = False) -> CompactionSettings:
    s = agent.settings
    settings = CompactionSettings(ctx_length=s.ctx_length, history_share=s.history_share)
    if force:  # after a context-window error: aim at half of what was sent
        half = max(1, agent.history.tokens(agent.shared.counter) // 2)
        settings.ctx_length = max(1, int(half / s.history_share))
    return settings


def at_most(text: str) -> int:
    """An upper bound of approximate_tokens(text) from its length alone: a cl100k token is at least one
    byte and the fallback count at most one a character; a character is one byte when ASCII, at most four."""
    n = len(text)
    return int(SAFETY_FACTOR * (n if text.isascii() else 4 * n))


class _AtMost(TokenCounter):
    """Counts with `at_most`, uncached (a length is cheaper than a cache lookup), and how often it did."""

    counted = 0

    def count(self, text: str) -> int:
        self.counted += 1
        n = len(text)
        return int(SAFETY_FACTOR * (n if text.isascii() else 4 * n))

    def count_rendered(self, role: str, text: str) -> int:
        """`count(f"{role}: {text}")` without the joined copy (the role and ": " are ASCII)."""
        self.counted += 1
        n = len(text) + len(role) + 2
        return int(SAFETY_FACTOR * (n if text.isascii() else 4 * n))


_AT_MOST = _AtMost(at_most)
_RECOUNT = 32  # more messages measured than this on a later step: something else evicts the bound's caches
# id(history) -> (a weak reference to it, whether its bound is still used). A history is counted exactly
# from the step its bound goes over budget, or its bound had to be measured anew (an exact count of the
# same history, made elsewhere on every step, would evict the bound's per-message caches and back again)
_BOUNDED: dict[int, tuple["weakref.ref[Any]", bool]] = {}


def within_budget(history: Any, counter: TokenCounter, budget: int) -> bool:
    """Is the history's token total (by `counter`) within `budget`? Counted exactly only when the bound of
    its length says it might not be (the bound's per-topic total is kept like the exact one: each step
    measures only the messages added or changed)."""
    if counter.fn is approximate_tokens:
        key = id(history)
        seen = _BOUNDED.get(key)
        if seen is not None and seen[0]() is not history:
            seen = None
        if seen is None or seen[1]:
            before = _AT_MOST.counted
            fits = history.tokens(_AT_MOST) <= budget
            if seen is None:
                seen = (weakref.ref(history, lambda _r, key=key: _BOUNDED.pop(key, None)), True)  # type: ignore[misc]
            elif _AT_MOST.counted - before > _RECOUNT:
                fits = False
            _BOUNDED[key] = (seen[0], fits)
            if fits:
                return True
    return bool(history.tokens(counter) <= budget)


_BUDGETS: dict[tuple[Any, Any], int] = {}  # (ctx_length, history_share) -> the budget they give


def _budget(agent: "Agent") -> int:
    s = agent.settings
    key = (s.ctx_length, s.history_share)
    budget = _BUDGETS.get(key)
    if budget is None:
        budget = CompactionSettings(ctx_length=s.ctx_length, history_share=s.history_share).budget
        if len(_BUDGETS) < 64:
            _BUDGETS[key] = budget
    return budget


async def organize_history(agent: "Agent", force: bool = False) -> CompactionEvent | None:
    counter = agent.shared.counter
    settings = settings_for(agent, True) if force else None
    if within_budget(agent.history, counter, settings.budget if settings is not None else _budget(agent)):
        return None
    settings = settings or settings_for(agent)
    summarize = None
    if agent.model_spec("utility"):
        async def summarize(system: str, message: str) -> str:
            return await agent.call_utility_model(system, message, purpose="compaction") or ""
    event = await compact(agent.history, settings, summarize, counter, templates_for(agent))
    if event is not None:
        if agent.turns:
            agent.turns[-1].compactions.append(event)
        agent.data.setdefault("compactions", []).append(event)
        await agent.fire("history_compacted", event=event)
    return event


async def compactor(agent: "Agent", force: bool = False) -> Any:
    return await organize_history(agent, force=force)
