"""System section: the main prompt (agent.system.main.md and the parts it includes)."""
from a0nb.ext import Extension, extensible
from a0nb.ext import section


@extensible
def build_prompt(agent):
    workdir = agent.hierarchy.workdir  # (the same Path object step after step: the key compares by identity)
    return agent.prompts.reuse("main", (workdir, agent.project.variables),
                               lambda: agent.render_prompt("agent.system.main.md", workdir=str(workdir)))


class MainPrompt(Extension):
    def execute(self, system_prompt=None, loop_data=None, **kwargs):
        system_prompt.append(self.agent.prompts.reuse.derived(build_prompt(self.agent), section))
