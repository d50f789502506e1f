"""extras_temporary["agent_info"]: agent number, profile, chat model and preset."""
from a0nb.ext import Extension, extra_text


class IncludeAgentInfo(Extension):
    def execute(self, loop_data=None, **kwargs):
        agent = self.agent
        loop_data.extras_temporary["agent_info"] = extra_text(
            agent, "agent.extras.agent_info.md", number=agent.number, profile=agent.profile,
            llm=agent.model_spec("chat") or "(none)", preset=agent.settings.preset)
