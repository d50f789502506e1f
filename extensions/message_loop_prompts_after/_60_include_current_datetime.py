"""extras_temporary["current_datetime"]: the local time, from an injectable clock
(A0NB_FROZEN_TIME or the frozen_time setting) so recorded notebooks stay deterministic."""
import datetime

from a0nb.ext import Extension, extra_text

FORMAT = "%Y-%m-%d %H:%M:%S"
_DATETIME = datetime.datetime
_STRFTIME = _DATETIME.strftime
# A process-wide memo, not state: the last plain datetime stamped, its tzinfo and its stamp (one slot, replaced
# whole). Steps come many to a second, and an equal datetime with the very same tzinfo has the same wall time.
_LAST = [(None, None, "")]


def stamp(now):
    """now.strftime(FORMAT), written out for four-digit years: strftime imports `time` on every call."""
    last = _LAST[0]
    if type(now) is _DATETIME and last[0] == now and last[1] is now.tzinfo:
        return last[2]
    year = now.year
    if 1000 <= year and type(now).strftime is _STRFTIME:
        text = f"{year}-{now.month:02d}-{now.day:02d} {now.hour:02d}:{now.minute:02d}:{now.second:02d}"
        if type(now) is _DATETIME:
            _LAST[0] = (now, now.tzinfo, text)
        return text
    return now.strftime(FORMAT)


class IncludeCurrentDatetime(Extension):
    def execute(self, loop_data=None, **kwargs):
        agent = self.agent
        loop_data.extras_temporary["current_datetime"] = extra_text(agent, "agent.system.datetime.md",
                                                                    date_time=stamp(agent.now()))
