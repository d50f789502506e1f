"""The fingerprint ignores extras that describe the moment (clock, file tree) but not the conversation."""
from __future__ import annotations

import json

from a0nb.providers.cassette import fingerprint


def _request(extras: dict[str, str], question: str = "hi") -> dict[str, object]:
    user = '{"user_message": "' + question + '"}\n[EXTRAS]\n' + json.dumps(extras)
    return {"role": "chat", "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": user}],
            "params": {}}


def test_file_tree_and_clock_do_not_change_the_fingerprint() -> None:
    a = _request({"current_datetime": "2026-01-01 10:00:00", "project_file_structure": "a.ipynb", "agent_info": "x"})
    b = _request({"current_datetime": "2027-05-05 11:11:11", "project_file_structure": "a.ipynb\nc.yaml",
                  "agent_info": "x"})
    assert fingerprint(a) == fingerprint(b)


def test_other_extras_and_messages_still_count() -> None:
    base = _request({"agent_info": "x"})
    assert fingerprint(base) != fingerprint(_request({"agent_info": "y"}))
    assert fingerprint(base) != fingerprint(_request({"agent_info": "x"}, question="other"))
