"""System section: the tools of the configured MCP servers (started here, lazily, on first need), with
provenance (server, tool); nothing when no server is configured."""
from a0nb.ext import Extension, Section, extensible, mcp_of, mcp_tools_prompt


@extensible
async def build_prompt(agent):
    manager = mcp_of(agent)
    if not manager.servers:
        return ""
    await manager.start()
    return mcp_tools_prompt(agent, manager)


def inputs(agent):
    """Nothing while no server is configured; with servers, None: the section is asked for at every step."""
    return None if mcp_of(agent).servers else ()


class MCPToolsPrompt(Extension):
    section_inputs = staticmethod(inputs)

    async def execute(self, system_prompt=None, loop_data=None, **kwargs):
        text = await build_prompt(self.agent)
        if text:
            system_prompt.append(Section(text))
