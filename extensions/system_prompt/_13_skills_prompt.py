"""System section: how to find and load skills (the list itself comes through skills_tool and EXTRAS)."""
from a0nb.ext import Extension, extensible
from a0nb.ext import section


def inputs(agent):
    return (agent.project.variables,)


@extensible
def build_prompt(agent):
    return agent.prompts.reuse("skills", inputs(agent), lambda: agent.render_prompt("agent.system.skills.md"))


class SkillsPrompt(Extension):
    section_inputs = staticmethod(inputs)

    def execute(self, system_prompt=None, loop_data=None, **kwargs):
        system_prompt.append(self.agent.prompts.reuse.derived(build_prompt(self.agent), section))
