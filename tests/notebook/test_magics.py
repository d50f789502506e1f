"""The `%a0` magic in a real InteractiveShell: loading, config and env layers, every subcommand,
interpolation, formats, errors as one line, chat mode, completion and Shift+Tab help."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from IPython.core.completer import provisionalcompleter
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from a0nb.notebook.magics import SUBCOMMANDS, get_magics, interpolate, split_options
from a0nb.notebook.chat import keep_question_marks, transform
from a0nb.notebook.completion import MATCHER_ID
from a0nb.settings import setting_names
from a0nb.testing import answer, tool_reply


def make_shell(config: Config | None = None) -> InteractiveShell:
    dispose()
    cfg = config or Config()
    cfg.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=cfg)
    shell.display_pub = CapturingDisplayPublisher()
    return shell


def dispose() -> None:
    """Drop the singleton; its atexit reset (a full gc.collect per shell) would cost ~0.4 s each at exit."""
    import atexit
    if InteractiveShell.initialized():
        atexit.unregister(InteractiveShell.instance().atexit_operations)
    InteractiveShell.clear_instance()


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / ".ipython"))
    return tmp_path


@pytest.fixture
def shell(folder: Path) -> Iterator[InteractiveShell]:
    sh = make_shell()
    sh.run_line_magic("load_ext", "a0nb")
    yield sh
    sh.run_line_magic("unload_ext", "a0nb")
    dispose()


def script(folder: Path, *replies: str, name: str = "replies.yaml") -> str:
    (folder / name).write_text(json.dumps(list(replies)), encoding="utf-8")
    return f"scripted:{name}"


def use(shell: InteractiveShell, folder: Path, *replies: str, approval: str = "auto") -> None:
    shell.run_line_magic("config", f'A0.model = "{script(folder, *replies)}"')
    shell.run_line_magic("config", f'A0.approval = "{approval}"')


def last(shell: InteractiveShell) -> dict[str, Any]:
    """The last output that is not the plugins' footer (which follows each answer; footer() returns it)."""
    return next(o for o in reversed(shell.display_pub.outputs) if "footer" not in o["metadata"].get("a0", {}))


def footer(shell: InteractiveShell) -> dict[str, Any] | None:
    out = shell.display_pub.outputs[-1]
    return out if "footer" in out["metadata"].get("a0", {}) else None


def last_text(shell: InteractiveShell) -> str:
    return last(shell)["data"]["text/plain"]


def magics(shell: InteractiveShell) -> Any:
    found = get_magics(shell)
    assert found is not None
    return found


# -- loading -----------------------------------------------------------------------------------------

def test_load_is_silent_idempotent_and_cheap(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sys
    sh = make_shell()
    sh.run_line_magic("load_ext", "a0nb")
    sh.run_line_magic("load_ext", "a0nb")
    out = capsys.readouterr()
    assert out.err == ""
    assert list(sh.magics_manager.registry).count("A0Magics") == 1
    assert sum(type(c).__name__ == "A0" for c in sh.configurables) == 1
    assert sum(getattr(m, "matcher_identifier", "") == MATCHER_ID for m in sh.Completer.custom_matchers) == 1
    assert sh.display_pub.outputs == []
    dispose()


def test_load_does_not_import_litellm_or_widgets(folder: Path) -> None:
    import subprocess
    import sys
    code = ("import sys; from IPython.core.interactiveshell import InteractiveShell as S; s = S.instance(); "
            "s.run_line_magic('load_ext', 'a0nb'); print(sorted({'litellm', 'ipywidgets'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=folder,
                         env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert out.stdout.strip() == "[]", out.stderr


def test_reload_ext_twice_keeps_one_of_everything(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, answer("one"), answer("two"))
    shell.run_line_magic("a0", "chat on")
    for _ in range(2):
        shell.run_line_magic("reload_ext", "a0nb")
    assert list(shell.magics_manager.registry).count("A0Magics") == 1
    assert sum(type(c).__name__ == "A0" for c in shell.configurables) == 1
    assert sum(type(c).__name__ == "A0Magics" for c in shell.configurables) == 1
    assert sum(getattr(m, "matcher_identifier", "") == MATCHER_ID for m in shell.Completer.custom_matchers) == 1
    chat = [t for t in shell.input_transformers_cleanup if getattr(t, "__name__", "") == "a0nb_chat_transformer"]
    assert len(chat) <= 1
    # %config values live in the shell's config, so they survive the reload
    shell.run_line_magic("a0", "ask hello")
    assert "one" in last_text(shell)


def test_unload_removes_everything(folder: Path) -> None:
    sh = make_shell()
    original_inspect = sh.object_inspect_mime
    sh.run_line_magic("load_ext", "a0nb")
    sh.run_line_magic("a0", "chat on")
    sh.run_line_magic("unload_ext", "a0nb")
    assert "a0" not in sh.magics_manager.magics["line"]
    assert "a0" not in sh.magics_manager.magics["cell"]
    assert not any(type(c).__name__ in ("A0", "A0Magics") for c in sh.configurables)
    assert not any(getattr(m, "matcher_identifier", "") == MATCHER_ID for m in sh.Completer.custom_matchers)
    assert not any(getattr(t, "__name__", "") == "a0nb_chat_transformer" for t in sh.input_transformers_cleanup)
    assert sh.object_inspect_mime == original_inspect
    dispose()


# -- configuration -----------------------------------------------------------------------------------

def test_every_setting_is_a_config_trait(shell: InteractiveShell) -> None:
    traits = set(magics(shell).options.trait_names(config=True))
    assert set(setting_names()) <= traits
    assert {"model", "utility_model", "profile", "format", "approval", "chat"} <= traits


def test_config_magic_sets_model_and_settings(shell: InteractiveShell, folder: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("config", 'A0.model = "scripted:x.yaml"')
    shell.run_line_magic("config", "A0.max_iterations = 7")
    assert shell.run_line_magic("config", "A0.model") == "scripted:x.yaml"
    agent = magics(shell).agent
    assert agent.model_spec("chat") == "scripted:x.yaml"
    assert agent.settings.max_iterations == 7
    shell.run_line_magic("config", "A0")
    assert "A0.model" in capsys.readouterr().out
    shell.run_line_magic("config", "A0.model = None")
    assert magics(shell).agent.model_spec("chat") == ""


def test_env_is_the_default_and_config_overrides(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A0NB_MODEL", "scripted:env.yaml")
    monkeypatch.setenv("A0NB_FORMAT", "text")
    monkeypatch.setenv("A0NB_MAX_ITERATIONS", "9")
    sh = make_shell()
    sh.run_line_magic("load_ext", "a0nb")
    m = magics(sh)
    assert sh.run_line_magic("config", "A0.model") == "scripted:env.yaml"
    assert m.options.format == "text"
    assert m.options.max_iterations == 9
    assert m.agent.model_spec("chat") == "scripted:env.yaml"
    assert m.agent.settings.max_iterations == 9
    sh.run_line_magic("config", 'A0.model = "scripted:cfg.yaml"')
    assert m.agent.model_spec("chat") == "scripted:cfg.yaml"
    dispose()


def test_config_file_section_c_A0(folder: Path) -> None:
    cfg = Config()
    cfg.A0.model = "scripted:fromfile.yaml"
    cfg.A0.profile = "developer"
    sh = make_shell(cfg)
    sh.run_line_magic("load_ext", "a0nb")
    agent = magics(sh).agent
    assert agent.model_spec("chat") == "scripted:fromfile.yaml"
    assert agent.profile == "developer"
    dispose()


def test_approval_default_follows_stdin_and_env(shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("A0NB_APPROVAL")  # the suite's own default (tests/conftest.py)
    m = magics(shell)
    assert m.agent.settings.approval == "deny"  # pytest's stdin is not a terminal and there is no front end
    monkeypatch.setenv("A0NB_APPROVAL", "ask")
    assert m.agent.settings.approval == "ask"
    shell.run_line_magic("config", 'A0.approval = "auto"')
    assert m.agent.settings.approval == "auto"


def test_static_outside_a_front_end(shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    assert magics(shell).interactive() is False
    monkeypatch.setenv("A0NB_STATIC", "1")
    assert magics(shell).interactive() is False


# -- asking ------------------------------------------------------------------------------------------

def test_ask_shows_the_turn_with_metadata(shell: InteractiveShell, folder: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    use(shell, folder, answer("Paris"))
    assert shell.run_line_magic("a0", "ask capital of France?") is None
    out = last(shell)
    assert "Paris" in out["data"]["text/plain"]
    assert "text/html" in out["data"]
    meta = out["metadata"]["a0"]
    assert meta["turn"] == 1 and meta["calls"] == 1 and meta["model"] == "scripted:replies.yaml"
    assert capsys.readouterr().err == ""


def test_cell_magic_options_format_text_and_output_variable(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, answer("plain answer"))
    shell.run_cell_magic("a0", "-f text -o result", "what is this?\nsecond line")
    out = last(shell)
    assert out["data"] == {"text/plain": "plain answer"}
    turn = shell.user_ns["result"]
    assert turn.text == "plain answer" and turn.message == "what is this?\nsecond line"


def test_interpolation_only_with_the_flag(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, answer("a"), answer("b"))
    shell.user_ns["name"] = "Ada"
    text = 'hi {name} {"json": {"nested": 1}} {missing} {0:>3} {name.upper}'
    shell.run_line_magic("a0", f"ask {text}")
    agent = magics(shell).agent
    assert agent.turns[-1].message == text
    shell.run_line_magic("a0", f"ask -i {text}")
    assert agent.turns[-1].message.startswith('hi Ada {"json": {"nested": 1}} {missing} {0:>3} <built-in method upper')


def test_braces_and_quotes_in_a_cell_never_break(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, answer("ok"))
    body = "def f(x):\n    return {'a': x}  # it's {not} a template\nprint(f\"{1+1}\")\n$HOME ${x}\n"
    shell.run_cell_magic("a0", "", body)
    assert magics(shell).agent.turns[-1].message == body.rstrip()


def test_format_code_sets_the_next_input(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, answer("Here you go:\n```python\nprint(40 + 2)\n```\nEnjoy."))
    shell.run_line_magic("a0", "ask -f code write code")
    assert shell.rl_next_input == "print(40 + 2)"
    assert "inserted" in last_text(shell)


def test_format_json_and_html(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, answer('{"a": [1, 2]}'), answer("<b>bold</b>"), answer("not json"))
    shell.run_line_magic("a0", "ask -f json give json")
    assert last(shell)["data"]["application/json"] == {"a": [1, 2]}
    shell.run_line_magic("a0", "ask --format html give html")
    assert last(shell)["data"]["text/html"] == "<b>bold</b>"
    shell.run_line_magic("a0", "ask -f json again")
    assert last_text(shell).startswith("A0Error: the answer is not JSON")


def test_no_history_leaves_the_conversation_alone(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, answer("a"), answer("b"))
    shell.run_line_magic("a0", "ask first")
    agent = magics(shell).agent
    before = len(agent.history.output())
    shell.run_line_magic("a0", "ask --no-history aside")
    assert len(agent.history.output()) == before
    assert agent.turns[-1].text == "b"


def test_per_ask_model_and_profile_are_temporary(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, answer("main"))
    other = script(folder, answer("other"), name="other.yaml")
    shell.run_line_magic("a0", f"ask --model {other} --profile developer hello")
    agent = magics(shell).agent
    assert agent.turns[-1].text == "other"
    assert agent.profile == "default"
    assert agent.model_spec("chat") == "scripted:replies.yaml"


def test_python_tool_sees_notebook_variables(shell: InteractiveShell, folder: Path) -> None:
    shell.run_cell("df = {'rows': 3, 'cols': ['a', 'b']}")
    use(shell, folder, tool_reply("code_execution", runtime="python", code="print(df['rows'] * 2); df['seen'] = True"),
        answer("done"))
    shell.run_line_magic("a0", "ask look at df")
    turn = magics(shell).agent.turns[-1]
    assert turn.steps[0].result.strip() == "6"
    assert shell.user_ns["df"]["seen"] is True


def test_at_paths_become_attachments(shell: InteractiveShell, folder: Path) -> None:
    (folder / "data.csv").write_text("a,b\n1,2\n")
    use(shell, folder, answer("ok"))
    shell.run_line_magic("a0", "ask summarise @data.csv and @missing.csv")
    first = magics(shell).agent.calls[0]
    user = json.dumps(first.messages, ensure_ascii=False)
    assert "data.csv" in user


# -- errors ------------------------------------------------------------------------------------------

def test_no_model_is_one_line_and_the_next_ask_works(shell: InteractiveShell, folder: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from a0nb.providers.registry import no_model_message
    shell.run_line_magic("a0", "ask hello")
    text = last_text(shell)
    assert text == "ConfigError: " + no_model_message().splitlines()[0]
    assert "\n" not in text
    assert last(shell)["metadata"]["a0"]["error"] == "ConfigError"
    assert capsys.readouterr().err == ""
    use(shell, folder, answer("now it works"))
    shell.run_line_magic("a0", "ask hello again")
    assert "now it works" in last_text(shell)


def test_model_error_is_one_line_and_history_stays_valid(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, {"error": "auth"}, answer("fine"))  # type: ignore[arg-type]
    shell.run_line_magic("a0", "ask hello -o t")
    assert last_text(shell).startswith("ModelError: ")
    agent = magics(shell).agent
    assert agent.history.validate() == []
    shell.run_line_magic("a0", "ask -o t2 hello")
    assert shell.user_ns["t2"].text == "fine"


def test_missing_api_key_names_the_variable(shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("A0NB_TEST_FAKE_KEY", raising=False)
    shell.run_line_magic("config", 'A0.model = "openai/gpt-4o-mini"')
    shell.run_line_magic("config", 'A0.api_key_env = "A0NB_TEST_FAKE_KEY"')
    shell.run_line_magic("a0", "ask hello")
    text = last_text(shell)
    assert text.startswith("ModelError: ") and "A0NB_TEST_FAKE_KEY" in text


def test_unknown_subcommand_is_a_one_line_usage_error(shell: InteractiveShell,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError, match="valid: ask, model"):
        shell.run_line_magic("a0", "frobnicate now")
    result = shell.run_cell("%a0 frobnicate")
    assert isinstance(result.error_in_exec, UsageError)
    err = capsys.readouterr().err.strip()
    assert err.startswith("UsageError: unknown subcommand 'frobnicate'") and "\n" not in err
    assert "Traceback" not in err


@pytest.mark.parametrize("line", ["ask -x hello", "ask -f pdf hello", "ask --model", "inspect --diff",
                                  "inspect notanumber", "inspect --export 'x", "chat maybe",
                                  "prompt extra", "replay", "record a b"])
def test_malformed_options_are_usage_errors(shell: InteractiveShell, line: str) -> None:
    with pytest.raises(UsageError):
        shell.run_line_magic("a0", line)


def test_malformed_cell_line_is_a_usage_error(shell: InteractiveShell) -> None:
    with pytest.raises(UsageError):
        shell.run_cell_magic("a0", '--model "unclosed', "hi")
    with pytest.raises(UsageError, match="needs a message"):
        shell.run_cell_magic("a0", "", "   \n")


# -- subcommands -------------------------------------------------------------------------------------

def test_help_everywhere(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("a0", "help")
    text = capsys.readouterr().out
    assert all(f"%a0 {name}" in text for name in SUBCOMMANDS)
    shell.run_line_magic("a0", "")
    assert "%a0 ask" in capsys.readouterr().out
    shell.run_line_magic("a0", "inspect --help")
    assert capsys.readouterr().out.startswith("%a0 inspect [N]")
    shell.run_cell_magic("a0", "--help", "ignored body")
    assert capsys.readouterr().out.startswith("%%a0")
    assert "%a0 ask" in (shell.find_line_magic("a0").__doc__ or "")


def test_model_utility_and_profile(shell: InteractiveShell, folder: Path) -> None:
    shell.run_line_magic("a0", "model")
    assert last_text(shell) == "chat model: (none configured)"
    shell.run_line_magic("a0", "model scripted:m.yaml")
    assert last_text(shell) == "chat model: scripted:m.yaml"
    assert shell.run_line_magic("config", "A0.model") == "scripted:m.yaml"
    shell.run_line_magic("a0", "utility scripted:u.yaml")
    assert magics(shell).agent.model_spec("utility") == "scripted:u.yaml"
    shell.run_line_magic("a0", "profile")
    listing = last_text(shell)
    assert "* default" in listing and "developer" in listing
    shell.run_line_magic("a0", "profile developer")
    assert magics(shell).agent.profile == "developer"
    with pytest.raises(UsageError, match="default"):
        shell.run_line_magic("a0", "profile nosuchprofile")
    assert magics(shell).agent.profile == "developer"


def test_reset_forgets_the_conversation(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, answer("a"), answer("b"))
    shell.run_line_magic("a0", "ask one")
    agent = magics(shell).agent
    assert agent.turns
    shell.run_line_magic("a0", "reset")
    assert agent.turns == [] and agent.calls == []
    shell.run_line_magic("a0", "ask one again")
    assert agent.turns[-1].text == "a"  # the scripted model restarted too


def test_views_render(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, tool_reply("code_execution", runtime="python", code="1 + 1"), answer("two"))
    shell.run_line_magic("a0", "inspect")
    assert "no model calls yet" in last_text(shell)
    shell.run_line_magic("a0", "ask add")
    for sub in ("prompt", "extras", "history", "skills", "tools", "extensions", "extensions monologue_start",
                "paths", "diagnostics", "inspect", "inspect 1", "inspect -1", "inspect 2 --diff 1"):
        count = len(shell.display_pub.outputs)
        shell.run_line_magic("a0", sub)
        assert len(shell.display_pub.outputs) == count + 1, sub
        data = last(shell)["data"]
        assert data["text/plain"].strip() and "text/html" in data, sub
    assert "pandas-inspect" in _html_of(shell, "skills")
    assert "code_execution" in _html_of(shell, "tools")
    with pytest.raises(UsageError, match="no call 99"):
        shell.run_line_magic("a0", "inspect 99")
    with pytest.raises(UsageError, match="unknown point"):
        shell.run_line_magic("a0", "extensions not_a_point")


def _html_of(shell: InteractiveShell, sub: str) -> str:
    shell.run_line_magic("a0", sub)
    return last(shell)["data"]["text/html"]


def test_inspect_export(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, answer("x"))
    shell.run_line_magic("a0", "ask hi")
    shell.run_line_magic("a0", "inspect --export trace.jsonl")
    assert (folder / "trace.jsonl").is_file()
    assert "exported 1 calls" in last_text(shell)


def test_record_replay_live(shell: InteractiveShell, folder: Path) -> None:
    with pytest.raises(UsageError, match="no model is configured"):
        shell.run_line_magic("a0", "record cassette.yaml")
    shell.run_line_magic("a0", "model openai/gpt-4o-mini")
    with pytest.raises(UsageError, match="not found"):
        shell.run_line_magic("a0", "replay missing.yaml")
    with pytest.raises(UsageError, match="does not exist"):
        shell.run_line_magic("a0", "record nofolder/c.yaml")
    shell.run_line_magic("a0", "record cassette.yaml")
    assert shell.run_line_magic("config", "A0.model") == "record:cassette.yaml:openai/gpt-4o-mini"
    shell.run_line_magic("a0", "live")
    assert shell.run_line_magic("config", "A0.model") == "openai/gpt-4o-mini"
    (folder / "cassette.yaml").write_text("[]\n")
    shell.run_line_magic("a0", "replay cassette.yaml")
    assert shell.run_line_magic("config", "A0.model") == "replay:cassette.yaml"
    shell.run_line_magic("a0", "live")
    assert shell.run_line_magic("config", "A0.model") == "openai/gpt-4o-mini"


FEATURE = '''
class Snippets:
    """A feature plugin: templates and completions."""

    def get_template(self, name, config):
        return {"hello": "print('hello from a template')"}.get(name)

    def get_completions(self, text, cursor, ctx):
        return ["zebra-snippet", {"text": "zebra-dict"}]
'''


def test_template_and_feature_completions(shell: InteractiveShell, folder: Path) -> None:
    shell.run_line_magic("a0", "template")
    assert "UsageFooter (plugin usage_footer)" in last_text(shell)  # the bundled feature plugin
    (folder / "features").mkdir()
    (folder / "features" / "snippets.py").write_text(FEATURE)
    shell.run_line_magic("a0", "template")
    assert "Snippets (notebook)" in last_text(shell)
    shell.run_line_magic("a0", "template hello")
    assert shell.rl_next_input == "print('hello from a template')"
    with pytest.raises(UsageError, match="no template 'nope'"):
        shell.run_line_magic("a0", "template nope")
    assert set(complete(shell, "%a0 ask use zeb")) == {"zebra-snippet", "zebra-dict"}


# -- chat mode ---------------------------------------------------------------------------------------

def test_transform_rules() -> None:
    assert transform(["hello\n", "world\n"]) == ["%%a0\n", "hello\n", "world\n"]
    assert transform(["\n", "  hi\n"]) == ["%%a0\n", "  hi\n"]
    assert transform(["%time 1\n"]) == ["%time 1\n"]
    assert transform(["%%timeit\n", "1\n"]) == ["%%timeit\n", "1\n"]
    assert transform(["!ls\n"]) == ["!ls\n"]
    assert transform(["%%python\n", "x = 1\n"]) == ["x = 1\n"]
    assert transform(["\n", "  \n"]) == ["\n", "  \n"]


def test_question_marks_stay_in_the_message(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, answer("four"))
    result = shell.run_cell("%a0 ask what is 2 + 2?")
    assert result.success
    assert magics(shell).agent.turns[-1].message == "what is 2 + 2?"
    assert keep_question_marks(["%a0 help\n"]) == ["%a0 help\n"]
    assert keep_question_marks(["%a0?\n"]) == ["%a0?\n"]  # help on the magic still works
    assert keep_question_marks(["%a0 ask why?\n"]) == ["get_ipython().run_line_magic('a0', 'ask why?')\n"]


def test_chat_mode_on_and_off(shell: InteractiveShell, folder: Path) -> None:
    use(shell, folder, answer("chatting"))
    original_python = shell.magics_manager.magics["cell"].get("python")
    shell.run_line_magic("a0", "chat on")
    shell.run_cell("what is {this}? It's 'quoted' and \"double\"")
    agent = magics(shell).agent
    assert agent.turns[-1].message == "what is {this}? It's 'quoted' and \"double\""
    result = shell.run_cell("%%python\nx = 20\nx * 2")
    assert result.result == 40 and shell.user_ns["x"] == 20
    shell.run_cell_magic("python", "", "y = x + 1")  # the magic itself, as other tools call it
    assert shell.user_ns["y"] == 21
    assert shell.run_cell("%pwd").result == str(folder)
    assert len(agent.turns) == 1
    shell.run_line_magic("a0", "chat off")
    assert shell.run_cell("w = 5").success and shell.user_ns["w"] == 5
    assert shell.magics_manager.magics["cell"].get("python") is original_python
    assert not any(getattr(t, "__name__", "") == "a0nb_chat_transformer" for t in shell.input_transformers_cleanup)


def test_chat_config_trait(folder: Path) -> None:
    cfg = Config()
    cfg.A0.chat = True
    sh = make_shell(cfg)
    sh.run_line_magic("load_ext", "a0nb")
    assert magics(sh).chat.on
    dispose()


# -- completion and Shift+Tab ------------------------------------------------------------------------

def complete(shell: InteractiveShell, text: str, cursor: int | None = None) -> list[str]:
    with provisionalcompleter():
        return [c.text for c in shell.Completer.completions(text, len(text) if cursor is None else cursor)]


def test_completions(shell: InteractiveShell, folder: Path) -> None:
    (folder / "data").mkdir()
    (folder / "data" / "sales.csv").write_text("x")
    assert complete(shell, "%a0 sk") == ["skills"]
    assert set(complete(shell, "%a0 ")) == set(SUBCOMMANDS)
    assert complete(shell, "%a0 profile de") == ["default", "developer"]
    assert complete(shell, "%a0 extensions monologue_s") == ["monologue_start"]
    assert complete(shell, "%a0 ask please use pandas-in") == ["pandas-inspect"]
    assert complete(shell, "%a0 ask call code_ex") == ["code_execution"]
    assert complete(shell, "%a0 ask skills_tool:lo") == ["load"]
    assert complete(shell, "%a0 ask skills_tool:load plot") == ["plot-quick"]
    assert complete(shell, "%a0 ask read @da") == ["data/"]
    assert complete(shell, "%a0 ask read @data/sa") == ["data/sales.csv"]
    (folder / "data" / "run.yaml").write_text("[]")
    assert complete(shell, "%a0 replay data/r") == ["data/run.yaml"]
    assert sorted(complete(shell, "%a0 chat o")) == ["off", "on"]
    assert complete(shell, "%a0 plugins en") == ["enable"]
    assert complete(shell, "%a0 plugins disable usage") == ["usage_footer"]
    assert complete(shell, "%a0 plugins config usage_footer st") == ["status="]
    assert complete(shell, "%a0 plugins config usage_footer footer=tokens fo") == ["footer="]
    assert complete(shell, "%%a0 -f text\nuse debug-tr") == ["debug-traceback"]
    assert "import" in complete(shell, "imp")  # ordinary Python completion is untouched
    assert "skills" not in complete(shell, "sk")


def test_completions_in_chat_mode(shell: InteractiveShell) -> None:
    assert complete(shell, "use pandas-in") != ["pandas-inspect"]
    shell.run_line_magic("a0", "chat on")
    assert complete(shell, "use pandas-in") == ["pandas-inspect"]
    assert "pandas-inspect" not in complete(shell, "%%python\npandas-in")


def test_inspect_tool_and_skill_names_but_python_wins(shell: InteractiveShell) -> None:
    bundle = shell.object_inspect_mime("code_execution")
    assert bundle["text/plain"].startswith("a0nb tool code_execution")
    bundle = shell.object_inspect_mime("pandas_inspect")
    assert bundle["text/plain"].startswith("a0nb skill pandas-inspect")
    shell.user_ns["response"] = 42
    assert "a0nb tool" not in shell.object_inspect_mime("response")["text/plain"]
    with pytest.raises(KeyError):
        shell.object_inspect_mime("no_such_name_anywhere")


# -- helpers -----------------------------------------------------------------------------------------

def test_split_options_keeps_the_text_raw() -> None:
    assert split_options('-f text --model a:b what\'s "up" {x}') == (["-f", "text", "--model", "a:b"],
                                                                     'what\'s "up" {x}')
    assert split_options("-- -5 plus 3") == ([], "-5 plus 3")
    assert split_options("plain -f later") == ([], "plain -f later")


def test_interpolate_is_conservative() -> None:
    ns = {"a": 1, "obj": type("O", (), {"x": "X"})()}
    assert interpolate("{a} {b} {obj.x} {obj.y} {} {{a}} {'k': 1}", ns) == "1 {b} X {obj.y} {} {1} {'k': 1}"


def test_shift_tab_on_a_subcommand_shows_its_usage(shell: InteractiveShell) -> None:
    """The kernel's inspect_request: the token at the cursor, then object_inspect_mime (as ipykernel does)."""
    from IPython.utils.tokenutil import token_at_cursor
    bundle = shell.object_inspect_mime(token_at_cursor("%a0 inspect 3", 8))
    assert bundle["text/plain"].startswith("%a0 inspect [N] [--diff M]") and "show model call N" in bundle["text/plain"]
    assert "%a0 search PHRASE" in shell.object_inspect_mime(token_at_cursor("%a0 search foo", 6))["text/plain"]
    assert "a0nb — Agent Zero in the notebook." in shell.object_inspect_mime(token_at_cursor("%a0 ask hi", 2))["text/plain"]
