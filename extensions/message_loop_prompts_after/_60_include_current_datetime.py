"""extras_temporary["current_datetime"]: the local time, from an injectable clock
(A0NB_FROZEN_TIME or the frozen_time setting) so recorded notebooks stay deterministic."""
import datetime

from a0nb.ext import Extension, extra_text

FORMAT = "%Y-%m-%d %H:%M:%S"
_STRFTIME = datetime.datetime.strftime


def stamp(now):
    """now.strftime(FORMAT), written out for four-digit years: strftime imports `time` on every call."""
    year = now.year
    if 1000 <= year and type(now).strftime is _STRFTIME:
        return f"{year}-{now.month:02d}-{now.day:02d} {now.hour:02d}:{now.minute:02d}:{now.second:02d}"
    return now.strftime(FORMAT)


class IncludeCurrentDatetime(Extension):
    def execute(self, loop_data=None, **kwargs):
        agent = self.agent
        loop_data.extras_temporary["current_datetime"] = extra_text(agent, "agent.system.datetime.md",
                                                                    date_time=stamp(agent.now()))
