"""MCP tools are looked up before local tools (Agent Zero's order). On `reset` of the main agent the
chat's MCP servers are stopped; they start again when next needed."""
from a0nb.ext import Extension, mcp_attach


class MCPTools(Extension):
    def execute(self, **kwargs):
        manager = self.agent.shared.mcp
        if manager is not None and self.agent.number == 0:
            manager.stop()  # agent_init runs again on reset (subordinates share the servers and skip this)
        mcp_attach(self.agent)
