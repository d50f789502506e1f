"""System section: the notebook folder as a project (.a0proj/ instructions, knowledge files)."""
from a0nb.ext import Extension, extensible
from a0nb.ext import section


@extensible
def build_prompt(agent):
    project = agent.project  # (immutable: the agent hands out the same one until a project file changed)
    return agent.prompts.reuse("project", (project,), lambda: _render(agent, project))


def _render(agent, project):
    instructions = project.instructions_text()
    if not (instructions or project.title or project.description or project.knowledge):
        return None
    knowledge = "\n".join(f"- {p.relative_to(project.folder)}" for p in project.knowledge) or "(none)"
    return agent.render_prompt("agent.system.projects.active.md", project_path=str(project.folder),
                               project_title=project.title, project_description=project.description,
                               project_instructions=instructions or "(none)", knowledge_files=knowledge)


class ProjectPrompt(Extension):
    def execute(self, system_prompt=None, loop_data=None, **kwargs):
        rendered = build_prompt(self.agent)
        if rendered is not None:
            system_prompt.append(self.agent.prompts.reuse.derived(rendered, section))
