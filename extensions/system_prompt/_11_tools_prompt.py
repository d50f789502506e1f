"""System section: every tool's prompt fragment (agent.system.tool.*.md, highest copy wins, sorted
by file name, with per-file variables from agent.tool_prompt_kwargs), plus generated
fragments for function and plugin tools, wrapped by agent.system.tools.md. Rebuilt only when a prompt
file, the hierarchy, a registered tool or a variable it uses changed."""
from a0nb.ext import Extension, extensible
from a0nb.ext import Section

PREFIX, SUFFIX = "agent.system.tool.", ".md"


def inputs(agent):
    """What the catalogue depends on besides prompt files (copies of the registrations: compared later)."""
    per_file = agent.tool_prompt_kwargs
    return (agent.hierarchy.generation, agent.project.variables, dict(agent.tools.registered),
            {k: dict(v) for k, v in per_file.items()} if per_file else None)


@extensible
def build_prompt(agent):
    return agent.prompts.reuse("tools", inputs(agent), lambda: _catalogue(agent, agent.tool_prompt_kwargs))


def _catalogue(agent, per_file):
    texts, sources, covered = [], [], set()
    for name, _dir in agent.prompts.names(PREFIX + "*" + SUFFIX):
        rendered = agent.render_prompt(name, **per_file.get(name, {}))
        texts.append(rendered.text.strip())
        sources.extend(rendered.sources)
        covered.add(name[len(PREFIX):-len(SUFFIX)])
    for tool_name, info in agent.tools.available().items():
        if tool_name not in covered and info.kind != "class" or (info.root_label == "registered in the notebook" and tool_name not in covered):
            texts.append(info.prompt())
    wrapper = agent.render_prompt("agent.system.tools.md", tools="\n\n".join(t for t in texts if t))
    return Section(wrapper.text, tuple(wrapper.sources) + tuple(sources))


class ToolsPrompt(Extension):
    section_inputs = staticmethod(inputs)

    def execute(self, system_prompt=None, loop_data=None, **kwargs):
        system_prompt.append(build_prompt(self.agent))
