"""History compaction for an agent: budget from its settings, summaries from its utility model (or
deterministic truncation when there is none), templates from prompt files, `history_compacted` fired."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from a0nb.engine.compaction import CompactionEvent, CompactionSettings, CompactionTemplates, compact

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


async def organize_history(agent: "Agent", force: bool = False) -> CompactionEvent | None:
    settings = settings_for(agent, force)
    counter = agent.shared.counter
    if agent.history.tokens(counter) <= settings.budget:
        return None
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
