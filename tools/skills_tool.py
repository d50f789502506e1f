"""The `skills_tool`: list, search, load and read files of skills (SKILL.md folders found
through the hierarchy). Errors come back as text for the model, never as exceptions."""
from a0nb.ext import RepairableError, Response, Tool
from a0nb.ext import read_skill_file, search_skills, skill_text

METHODS = ("list", "search", "load", "read_file")
MAX_LOADED = 5


class SkillsTool(Tool):
    description = "Find, load and read skills."
    parameters = {"type": "object", "required": ["method"], "properties": {
        "method": {"type": "string", "enum": list(METHODS)},
        "query": {"type": "string", "description": "for search: what the skill should help with"},
        "skill_name": {"type": "string", "description": "for load and read_file"},
        "file_path": {"type": "string", "description": "for read_file: a file inside the skill's folder"}}}

    async def execute(self, **kwargs):
        method = (self.method or self.args.get("method") or "").strip().lower()
        if method not in METHODS:
            return Response(message=f"skills_tool: unknown method {method!r}; use one of "
                                    + ", ".join(f"skills_tool:{m}" for m in METHODS))
        return await getattr(self, "_" + method)(**kwargs)

    async def _list(self, **kwargs):
        skills = self.agent.skills()
        if not skills:
            return Response(message="No skills are available.")
        lines = [f"{len(skills)} skills available:"]
        for name in sorted(skills):
            s = skills[name]
            desc = s.description if len(s.description) <= 200 else s.description[:200] + "…"
            extra = (f" v{s.version}" if s.version else "") + (f" tags={','.join(s.tags)}" if s.tags else "")
            lines.append(f"- {name}{extra}: {desc}")
        lines.append("Load one with skills_tool:load and its skill_name.")
        return Response(message="\n".join(lines))

    async def _search(self, query="", **kwargs):
        query = str(query or self.args.get("text", "")).strip()
        if not query:
            return Response(message="skills_tool:search needs a `query`.")
        hits = search_skills(self.agent.skills().values(), query, limit=10)
        if not hits:
            return Response(message=f"No skill matches {query!r}. Try skills_tool:list.")
        return Response(message="\n".join([f"Skills matching {query!r}:"]
                                          + [f"- {s.name} (score {score}): {s.description[:200]}" for s, score in hits]))

    def _find(self, skill_name):
        name = str(skill_name or "").strip().strip("*").strip()
        skills = self.agent.skills()
        if name in skills:
            return skills[name]
        from a0nb.ext import normalise_name
        return skills.get(normalise_name(name))

    async def _load(self, skill_name="", **kwargs):
        skill = self._find(skill_name)
        if skill is None:
            return Response(message=f"Skill {skill_name!r} not found. Use skills_tool:search or skills_tool:list.")
        ledger = self.agent.loaded_skills()
        if skill.name in ledger:
            ledger.remove(skill.name)
        ledger.append(skill.name)
        del ledger[:-MAX_LOADED]
        text = self.agent.read_prompt("agent.system.skills.loaded.md", name=skill.name, content=skill_text(skill))
        meta = {"name": skill.name, "path": str(skill.path), "source": "skills_tool:load", "content_included": True}
        return Response(message=text, additional={"skill_instructions": meta})

    async def _read_file(self, skill_name="", file_path="", **kwargs):
        skill = self._find(skill_name)
        if skill is None:
            return Response(message=f"Skill {skill_name!r} not found.")
        try:
            return Response(message=read_skill_file(skill, str(file_path or self.args.get("path", ""))))
        except RepairableError as exc:
            return Response(message=str(exc))
