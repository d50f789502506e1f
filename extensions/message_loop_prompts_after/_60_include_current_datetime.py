"""extras_temporary["current_datetime"]: the local time, from an injectable clock
(A0NB_FROZEN_TIME or the frozen_time setting) so recorded notebooks stay deterministic."""
from a0nb.ext import Extension


class IncludeCurrentDatetime(Extension):
    def execute(self, loop_data=None, **kwargs):
        now = self.agent.now()
        text = self.agent.read_prompt("agent.system.datetime.md", date_time=now.strftime("%Y-%m-%d %H:%M:%S"))
        loop_data.extras_temporary["current_datetime"] = text.strip()
