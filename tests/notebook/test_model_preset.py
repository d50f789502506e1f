"""`%a0 model preset [NAME|none]` (issue 17, item 8): lists the `_model_config` presets, chooses one for the
notebook's agent, and `%a0 model` says where the model comes from."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from IPython.core.error import UsageError

from a0nb.notebook.magics import get_magics
from test_magics import dispose, make_shell  # type: ignore[import-not-found]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / ".ipython"))
    monkeypatch.delenv("A0NB_MODEL", raising=False)
    presets = tmp_path / ".a0proj" / "plugins" / "_model_config" / "presets.yaml"
    presets.parent.mkdir(parents=True)
    presets.write_text(yaml.safe_dump([{"name": "Research", "chat": {"provider": "openrouter", "name": "m1"}},
                                       {"name": "Cheap", "chat": {"provider": "openai", "name": "m2"}}]))
    return tmp_path


def _notes(shell) -> list[str]:
    return [o["data"]["text/plain"] for o in shell.display_pub.outputs]


def test_model_preset_lists_chooses_and_shows_its_source(folder: Path) -> None:
    shell = make_shell()
    try:
        shell.run_line_magic("load_ext", "a0nb")
        shell.run_line_magic("a0", "model preset")
        assert "  Cheap" in _notes(shell)[-1] and "  Research" in _notes(shell)[-1]
        shell.run_line_magic("a0", "model preset Research")
        assert "* Research" in _notes(shell)[-1]
        assert get_magics(shell).agent.model_spec("chat") == "openrouter/m1"
        shell.run_line_magic("a0", "model")
        assert _notes(shell)[-1].startswith("chat model: openrouter/m1 (preset Research, ")
        assert "presets.yaml" in _notes(shell)[-1]
        with pytest.raises(UsageError, match="no model preset 'Nope'; defined: Cheap, Research"):
            shell.run_line_magic("a0", "model preset Nope")
        shell.run_line_magic("a0", "model preset none")
        assert get_magics(shell).agent.settings.preset == ""
    finally:
        shell.run_line_magic("unload_ext", "a0nb")
        dispose()
