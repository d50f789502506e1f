"""System section: secret aliases (never values) and project variables, when there are any."""
from a0nb.ext import Extension, extensible
from a0nb.ext import section


def inputs(agent):
    """Secret aliases and project variables (a Secrets is immutable and the agent hands out the same one
    until a secret or credential changed)."""
    return agent.secrets, agent.project.variables


@extensible
def build_prompt(agent):
    key = inputs(agent)
    return agent.prompts.reuse("secrets", key, lambda: _render(agent, *key))


def _render(agent, secrets, variables):
    if not secrets and not variables:
        return None
    lines = [f"- §§secret({e.key})" + (f" — {e.comment}" if e.comment else "") for e in secrets.keys()]
    var_lines = [f"- {k}: {v}" for k, v in variables.items()]
    return agent.render_prompt("agent.system.secrets.md", secrets="\n".join(lines) or "(none)",
                               vars="\n".join(var_lines) or "(none)")


class SecretsPrompt(Extension):
    section_inputs = staticmethod(inputs)

    def execute(self, system_prompt=None, loop_data=None, **kwargs):
        rendered = build_prompt(self.agent)
        if rendered is not None:
            system_prompt.append(self.agent.prompts.reuse.derived(rendered, section))
