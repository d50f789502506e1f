"""First pass only: skills matching the user's message → extras_temporary["relevant_skills"]
(names ≤ 100 and descriptions ≤ 220 characters; never skill bodies)."""
from a0nb.ext import Extension
from a0nb.ext import render_content
from a0nb.ext import search_skills

MIN_QUERY, LIMIT, NAME_MAX, DESC_MAX = 8, 6, 100, 220


def _cut(text, limit):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"


def query_of(message):
    if message is None:
        return ""
    content = message.content
    if isinstance(content, dict):
        content = content.get("user_message", content)
    return (content if isinstance(content, str) else render_content(content)).strip()


class RecallRelevantSkills(Extension):
    def execute(self, loop_data=None, **kwargs):
        if loop_data.iteration != 0:
            return
        query = query_of(loop_data.user_message)
        if len(query) < MIN_QUERY:
            return
        hits = search_skills(self.agent.skills().values(), query, limit=LIMIT)
        if not hits:
            return
        lines = "\n".join(f"- {_cut(s.name, NAME_MAX)}: {_cut(s.description, DESC_MAX)}" for s, _ in hits)
        text = self.agent.read_prompt("agent.system.skills.relevant.md", skills=lines).strip()
        loop_data.extras_temporary["relevant_skills"] = text
