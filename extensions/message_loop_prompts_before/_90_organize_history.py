"""Before the prompt is built: compact history when it is over budget (awaited, so runs stay deterministic)."""
from a0nb.ext import Extension
from a0nb.ext import organize_step


class OrganizeHistory(Extension):
    def execute(self, loop_data=None, **kwargs):
        # organize_history's check, made here: a coroutine (awaited by the chain) only when it compacts
        return organize_step(self.agent)
