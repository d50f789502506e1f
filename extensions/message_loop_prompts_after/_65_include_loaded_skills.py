"""Keep loaded skills in view: the ledger lives in chat-wide data; skill bodies live in history as
skills_tool results with `skill_instructions` metadata. After compaction removed a body, re-attach it
(newest first under a 12,000-token budget; a skill that does not fit is skipped), inserted oldest first."""
from a0nb.ext import Extension
from a0nb.ext import OutputItem
from a0nb.ext import skill_text

BUDGET = 12_000


class IncludeLoadedSkills(Extension):
    async def execute(self, loop_data=None, **kwargs):
        agent = self.agent
        ledger = agent.loaded_skills()
        if not ledger:
            return
        skills = agent.skills()
        ledger[:] = [name for name in ledger if name in skills]  # drop skills that no longer exist
        visible = {(item.metadata.get("skill_instructions") or {}).get("name")
                   for item in loop_data.history_output if item.metadata}
        counter, used, chosen = agent.shared.counter, 0, []
        for name in reversed(ledger):  # newest first
            if name in visible:
                continue
            skill = skills[name]
            text = agent.read_prompt("agent.system.skills.reattached.md", name=name, content=skill_text(skill))
            tokens = counter.count(text)
            if used + tokens > BUDGET:
                continue
            used += tokens
            chosen.append((skill, text))
        if not chosen:
            return
        for skill, text in reversed(chosen):  # inserted oldest first
            meta = {"name": skill.name, "path": str(skill.path), "source": "skills_tool:reattach",
                    "content_included": True}
            message = await agent.hist_add_tool_result("skills_tool:load", text, skill_instructions=meta)
            loop_data.history_output.append(OutputItem(False, message.output_content(), (message.id,), "raw",
                                                       "current topic", "tool_result", {"skill_instructions": meta}))
        await agent.fire("skills_reattached", skills=[s.name for s, _ in reversed(chosen)], tokens=used, budget=BUDGET)
