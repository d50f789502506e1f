"""System section: the main prompt (agent.system.main.md and the parts it includes)."""
from a0nb.ext import Extension, extensible
from a0nb.ext import section


def inputs(agent):
    """What the section depends on besides prompt files (the same Path object step after step: compared by identity)."""
    return agent.hierarchy.workdir, agent.project.variables


@extensible
def build_prompt(agent):
    key = inputs(agent)
    return agent.prompts.reuse("main", key, lambda: agent.render_prompt("agent.system.main.md", workdir=str(key[0])))


class MainPrompt(Extension):
    section_inputs = staticmethod(inputs)

    def execute(self, system_prompt=None, loop_data=None, **kwargs):
        system_prompt.append(self.agent.prompts.reuse.derived(build_prompt(self.agent), section))
