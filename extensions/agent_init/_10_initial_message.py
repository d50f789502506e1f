"""A brand-new main agent starts its history with the greeting from fw.initial_message.md."""
from a0nb.ext import Extension


class InitialMessage(Extension):
    def execute(self, **kwargs):
        agent = self.agent
        if agent.number != 0 or agent.history.messages():
            return
        greeting = agent.read_prompt("fw.initial_message.md")
        agent.history.add(True, greeting, "ai", initial=True)
