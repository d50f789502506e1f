"""A same-name override that fails to import keeps the lower (bundled) copy active, and a diagnostic names
the broken file: a broken `_10_mask_secrets.py` never lets a secret reach the model (issue 17, item 5)."""
from __future__ import annotations

from pathlib import Path

from a0nb import Agent
from a0nb.testing import answer, tool_reply

SECRET = "s3cr3t-value-1234567"


def test_broken_mask_secrets_override_keeps_bundled_masking(nb: Path) -> None:
    (nb / ".a0proj").mkdir()
    (nb / ".a0proj" / "secrets.env").write_text(f"API_TOKEN={SECRET}\n", encoding="utf-8")
    broken = nb / "extensions" / "tool_execute_after" / "_10_mask_secrets.py"
    broken.parent.mkdir(parents=True)
    broken.write_text("from helpers.extension import Extension\nimport no_such_module_anywhere\n", encoding="utf-8")
    (nb / "tools").mkdir()
    (nb / "tools" / "leak.py").write_text(f"def leak() -> str:\n    return 'the token is {SECRET}'\n", encoding="utf-8")
    agent = Agent(nb, model=[tool_reply("leak"), answer("done")])
    turn = agent.ask("go")
    assert turn.text == "done"
    sent = "\n".join(str(m["content"]) for call in agent.calls for m in call.messages)
    assert SECRET not in sent
    errors = [d for d in agent.diagnostics if d.severity == "error" and d.path == str(broken)]
    assert errors and "failed to import" in errors[0].message
    kept = [d for d in agent.diagnostics if "stays active" in d.message]
    assert kept and str(broken) in kept[0].message and kept[0].path.endswith("tool_execute_after/_10_mask_secrets.py")
    assert kept[0].path != str(broken)


def test_broken_main_prompt_override_keeps_the_system_prompt(nb: Path) -> None:
    broken = nb / "extensions" / "system_prompt" / "_10_main_prompt.py"
    broken.parent.mkdir(parents=True)
    broken.write_text("raise RuntimeError('half-edited file')\n", encoding="utf-8")
    agent = Agent(nb, model=[answer("done")])
    agent.ask("hi")
    system = agent.calls[0].messages[0]["content"]
    assert agent.read_prompt("agent.system.main.md").strip()[:80] in system
    assert any(d.path == str(broken) and d.severity == "error" for d in agent.diagnostics)
