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


def test_the_seed_tag_feature_runs_with_the_default_provider_every_turn(nb: Path) -> None:
    """Features are provider-agnostic: with a scripted (litellm-shaped) model, the seed's TagFeature, unchanged
    in features/, tags every final reply; the tag is in the call record and the inspector's call view."""
    (nb / "features").mkdir()
    (nb / "features" / "tag.py").write_text(block("TagFeature"))
    agent = Agent(nb, model=[answer("one"), answer("two")])
    first, second = agent.ask("a"), agent.ask("b")
    assert first.text == "one" and second.text == "two"
    assert [c.metadata for c in agent.calls] == [{"tag": True}, {"tag": True}]
    from a0nb.inspector import render_call
    assert "reply metadata" in render_call(agent.calls[-1]).html and "&quot;tag&quot;: true" in render_call(agent.calls[-1]).html


def test_features_around_the_default_provider_run_in_the_seed_order(nb: Path) -> None:
    log: list[str] = []

    class Spy(FeaturePlugin):
        def get_config_schema(self) -> Any:
            return {"suffix": {"type": "string", "default": " (checked)"}}

        def init(self, config: Any, state: Any) -> Any:
            log.append("init")
            return {**state, "suffix": config["suffix"]}

        def to_native_messages(self, messages: Any, native: Any) -> Any:
            log.append("to_native_messages")
            return native

        def initialize_request(self, native: Any, state: Any) -> Any:
            log.append("initialize_request")
            return native, state

        def finalize(self, finals: Any, natives: Any, state: Any) -> Any:
            log.append("finalize")
            assert natives[-1] is finals[-1] and natives[0]["role"] == "system"
            return [{**m, "content": m["content"].replace("plain", "plain" + state["suffix"])} for m in finals], natives, state

        def from_native_messages(self, native: Any, messages: Any) -> Any:
            log.append("from_native_messages")
            return messages
    agent = Agent(nb, model=[answer("plain answer")])
    agent.register_feature(Spy)
    turn = agent.ask("go")
    assert log == ["init", "to_native_messages", "initialize_request", "finalize", "from_native_messages"]
    assert turn.text == "plain (checked) answer"  # the cold path may change the reply before it is used


def test_a_feature_breaking_its_contract_names_its_file(nb: Path) -> None:
    (nb / "features").mkdir()
    (nb / "features" / "bad.py").write_text(
        "from agent_core.types import FeaturePlugin\n\nclass Bad(FeaturePlugin):\n"
        "    def init(self, config, state):\n        return state\n"
        "    def finalize(self, finals, natives, state):\n        return finals\n")
    agent = Agent(nb, model=[answer("x")])
    import pytest
    from a0nb.errors import ModelError
    with pytest.raises(ModelError) as info:
        agent.ask("go")
    assert "bad.py" in str(info.value) and "Bad.finalize" in str(info.value) and "(finals, natives, state)" in str(info.value)
    assert agent.history.validate() == []


def test_the_expansion_is_shown_in_the_turn_view(nb: Path) -> None:
    _marker(nb)
    agent = Agent(nb, model=[answer("noted")])
    turn = agent.ask("remember this @tag:important please")
    from a0nb.inspector import render_turn
    view = render_turn(turn)
    line = "expanded '@tag:important' → '[tagged:important]' by MarkerFeature (features/marker.py)"
    assert line in view.text and "marker.py" in view.text
    assert "expanded &#x27;@tag:important&#x27;" in view.html or "expanded '@tag:important'" in view.html


_STYLE = ("from agent_core.types import FeaturePlugin\n\nclass Style(FeaturePlugin):\n"
          "    def get_config_schema(self):\n        return {}\n"
          "    def init(self, config, state):\n        return state\n"
          "    def finalize(self, finals, natives, state):\n        return finals, natives, state\n")


def test_the_features_with_a_template_follow_the_files_and_registrations(nb: Path) -> None:
    """Which features have a `get_template` is kept with the discovered features: a feature file that gains or
    loses one, a feature registered from Python, are seen at the next step."""
    (nb / "features").mkdir()
    style = nb / "features" / "style.py"
    style.write_text(_STYLE)
    agent = Agent(nb, model=[answer("ok")] * 4)

    def system() -> str:
        return str(agent.ask("hi").calls[0].messages[0]["content"])
    assert "haiku" not in system()
    style.write_text(_STYLE + "    def get_template(self, config):\n        return 'Answer in haiku form.'\n")
    assert "Answer in haiku form." in system()

    class Limerick(FeaturePlugin):
        def init(self, config: Any, state: Any) -> Any:
            return state

        def finalize(self, finals: Any, natives: Any, state: Any) -> Any:
            return finals, natives, state

        def get_template(self, config: Any) -> str:
            return "Or as a limerick."
    agent.register_feature(Limerick)
    text = system()
    assert "Answer in haiku form." in text and "Or as a limerick." in text
    style.write_text(_STYLE + "    # no template any more\n")
    text = system()
    assert "haiku" not in text and "Or as a limerick." in text
