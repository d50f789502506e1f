"""System section: the notebook folder as a project (.a0proj/ instructions, knowledge files)."""
from a0nb.ext import Extension, extensible
from a0nb.ext import section


def inputs(agent):
    return (agent.project,)  # (immutable: the agent hands out the same one until a project file changed)


@extensible
def build_prompt(agent):
    key = inputs(agent)
    return agent.prompts.reuse("project", key, lambda: _render(agent, key[0]))


def _render(agent, project):
    instructions = project.instructions_text()
    if not (instructions or project.title or project.description or project.knowledge):
        return None
    knowledge = "\n".join(f"- {p.relative_to(project.folder)}" for p in project.knowledge) or "(none)"
    return agent.render_prompt("agent.system.projects.active.md", project_path=str(project.folder),
                               project_name=project.title, project_description=project.description,
                               project_instructions=instructions or "(none)", knowledge_files=knowledge)


class ProjectPrompt(Extension):
    section_inputs = staticmethod(inputs)

    def execute(self, system_prompt=None, loop_data=None, **kwargs):
        rendered = build_prompt(self.agent)
        if rendered is not None:
            system_prompt.append(self.agent.prompts.reuse.derived(rendered, section))
