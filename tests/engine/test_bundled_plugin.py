"""The bundled plugin `notebook_context`: off by default, on with a toggle, configurable."""
from __future__ import annotations

import json
from pathlib import Path

from a0nb import Agent
from a0nb.testing import answer


def _extras(agent: Agent) -> dict[str, str]:
    call = agent.ask("what is in df?").calls[0]
    return {p.label.split(": ", 1)[1]: p.text for p in call.parts if p.kind == "extras"}


def test_off_by_default(nb: Path) -> None:
    agent = Agent(nb, model=[answer("x")], namespace={"df": [1, 2, 3]})
    assert "notebook_variables" not in _extras(agent)
    assert "plugin notebook_context" not in [r.label for r in agent.paths]


def test_toggle_on_lists_variables_with_config(nb: Path) -> None:
    folder = nb / ".a0proj" / "plugins" / "notebook_context"
    folder.mkdir(parents=True)
    (folder / ".toggle-1").write_text("")
    (folder / "config.json").write_text(json.dumps({"max_variables": 2}))
    ns = {"df": [1, 2, 3], "name": "abc", "third": 3, "_private": 1, "json": json}
    agent = Agent(nb, model=[answer("x")], namespace=ns)
    text = _extras(agent)["notebook_variables"]
    assert "df: list len=3" in text and "name: str len=3" in text and "third" not in text
    assert "more variables" in text and "_private" not in text and "json" not in text
