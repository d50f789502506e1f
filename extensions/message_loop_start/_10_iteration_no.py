"""Count loop passes over the agent's lifetime in agent.data["iteration_no"]."""
from a0nb.ext import Extension


class IterationNo(Extension):
    def execute(self, loop_data=None, **kwargs):
        self.agent.data["iteration_no"] = self.agent.data.get("iteration_no", 0) + 1
