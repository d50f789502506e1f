"""Feature plugins in the notebook: `get_completions` feeds Tab completion of `%a0 ask`, an accepted completion
is expanded by `apply_completion` before the message is sent (the turn lists what was expanded), and
`get_template` adds a system-prompt section whose source is the feature."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from a0nb import Agent
from a0nb.ext import FeaturePlugin
from a0nb.testing import answer
from cl_seed import block


def _marker(nb: Path) -> None:
    (nb / "features").mkdir(exist_ok=True)
    (nb / "features" / "marker.py").write_text(block("MarkerFeature"))  # unchanged: agent_core.types import


def test_an_accepted_completion_is_expanded_before_the_message_is_sent(nb: Path) -> None:
    _marker(nb)
    agent = Agent(nb, model=[answer("noted"), answer("again")])
    turn = agent.ask("remember this @tag:important please")
    user = turn.calls[0].messages[-1]["content"]
    assert "[tagged:important] " in user and "@tag:important" not in user
    [done] = turn.expansions
    assert done["replacement"] == "@tag:important" and done["snippet"] == "[tagged:important] "
    assert done["feature"] == "MarkerFeature" and done["path"].endswith("marker.py")
    assert agent.ask("no markers here").expansions == []


def test_registered_features_expand_too(nb: Path) -> None:
    class Upper(FeaturePlugin):
        def init(self, config: Any, state: Any) -> Any:
            return state

        def finalize(self, finals: Any, natives: Any, state: Any) -> Any:
            return finals, natives, state

        def get_completions(self, config: Any, text: str) -> Any:
            return [{"replacement": "!up", "start": len(text) - 3}] if text.endswith("!up") else []

        def apply_completion(self, config: Any, text: str, completion: Any) -> str:
            return "UPPER"
    agent = Agent(nb, model=[answer("ok")])
    agent.register_feature(Upper)
    turn = agent.ask("make it !up now")
    assert "make it UPPER now" in turn.calls[0].messages[-1]["content"]


def test_get_template_is_a_system_section_with_the_feature_as_source(nb: Path) -> None:
    (nb / "features").mkdir()
    (nb / "features" / "style.py").write_text(
        "from agent_core.types import FeaturePlugin\n\nclass Style(FeaturePlugin):\n"
        "    def get_config_schema(self):\n        return {}\n"
        "    def init(self, config, state):\n        return state\n"
        "    def finalize(self, finals, natives, state):\n        return finals, natives, state\n"
        "    def get_template(self, config):\n        return 'Answer in haiku form.'\n")
    agent = Agent(nb, model=[answer("ok")])
    call = agent.ask("hi").calls[0]
    assert "Answer in haiku form." in call.messages[0]["content"]
    [part] = [p for p in call.parts if "Answer in haiku form." in p.text]
    assert part.label == "system: Style.get_template" and "_15_feature_templates" in part.source
    assert "Style.get_template (notebook)" in part.files


def test_tab_completion_offers_the_feature_completions(tmp_path: Path, monkeypatch: Any) -> None:
    from IPython.core.completer import provisionalcompleter
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / ".ipython"))
    _marker(tmp_path)
    cfg = Config()
    cfg.HistoryManager.hist_file = ":memory:"
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance(config=cfg)
    try:
        shell.run_line_magic("load_ext", "a0nb")
        line = "%a0 ask remember this @tag:"
        with provisionalcompleter():
            found = [line[:c.start] + c.text + line[c.end:] for c in shell.Completer.completions(line, len(line))]
        assert "%a0 ask remember this @tag:important" in found  # the line once the completion is accepted
        shell.run_line_magic("unload_ext", "a0nb")
    finally:
        import atexit
        atexit.unregister(shell.atexit_operations)
        InteractiveShell.clear_instance()
