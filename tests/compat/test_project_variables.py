"""`.a0proj/variables.env` values in prompt files: `{{VAR}}` placeholders and `{{if}}` blocks (issue 17, item 4)."""
from __future__ import annotations

from pathlib import Path

from a0nb import Agent
from a0nb.testing import answer


def test_variables_env_fills_placeholders_and_conditions_in_any_prompt(nb: Path) -> None:
    (nb / ".a0proj").mkdir()
    (nb / ".a0proj" / "variables.env").write_text("TEAM_NAME=Lattice Crew\nSTRICT_MODE=yes\n", encoding="utf-8")
    (nb / "prompts").mkdir()
    (nb / "prompts" / "agent.system.main.specifics.md").write_text(
        "You work for {{TEAM_NAME}}.\n{{if STRICT_MODE == 'yes'}}Answer in one sentence.{{endif}}\n"
        "{{if STRICT_MODE == 'no'}}Ramble freely.{{endif}}\n", encoding="utf-8")
    agent = Agent(nb, model=[answer("ok")])
    agent.ask("hi")
    system = agent.calls[0].messages[0]["content"]
    assert "You work for Lattice Crew." in system
    assert "Answer in one sentence." in system and "Ramble freely" not in system
    assert "{{" not in system
    # a value the caller passes wins over the project's
    assert agent.read_prompt("agent.system.main.specifics.md", TEAM_NAME="Other").startswith("You work for Other.")
