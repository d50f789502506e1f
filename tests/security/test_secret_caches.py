"""The secret set and the trust decisions are worked out once and kept (issue 23), but never kept past a
change: a credential that appears in the environment, `.env` or `secrets.env` mid-turn is masked from the
next masking on (a tool's own output included), and a trust change is seen at once."""
from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

import a0nb
from a0nb import Agent, folder_trust
from a0nb.ext import Response, Tool
from a0nb.resources import user_home
from a0nb.testing import answer, tool_reply

TOKEN = "tok-Midturn-4471xq"


def _blob(agent: Agent) -> str:
    return "\n".join([json.dumps(agent.history.to_dict(), ensure_ascii=False),
                      json.dumps([c.to_dict() for c in agent.calls], default=str, ensure_ascii=False)])


def _agent_with_tool(nb: Path, effect: Any, reply: str) -> Agent:
    """A turn of three steps: a warm-up tool call (every cache filled), the tool that changes a source
    of secrets and prints the value, then an answer that quotes it."""

    class Change(Tool):
        async def execute(self, **kwargs: Any) -> Response:
            effect()
            return Response(message=f"now set: {TOKEN}")

    class Noop(Tool):
        async def execute(self, **kwargs: Any) -> Response:
            return Response(message="nothing to see")

    agent = Agent(nb, model=[tool_reply("noop"), tool_reply("change"), answer(reply)])
    agent.register_tool(Change, "change")
    agent.register_tool(Noop, "noop")
    return agent


def test_environment_credential_set_mid_turn_is_masked(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = _agent_with_tool(nb, lambda: monkeypatch.setenv("ACME_SERVICE_TOKEN", TOKEN), f"the token is {TOKEN}")
    assert agent.mask(TOKEN) == TOKEN  # not a secret yet
    turn = agent.ask("set the token")
    blob = _blob(agent)
    assert TOKEN not in blob and TOKEN not in turn.text
    assert "now set: <redacted:ACME_SERVICE_TOKEN>" in blob  # the tool's own output, the same step
    assert agent.calls[-1].response.count("<redacted:ACME_SERVICE_TOKEN>") == 1  # the next call's record


def test_environment_credential_changed_or_removed_is_seen(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = Agent(nb, model=[answer("ok")])
    monkeypatch.setenv("ACME_API_KEY", TOKEN)
    assert agent.mask(TOKEN) == "<redacted:ACME_API_KEY>"
    monkeypatch.setenv("ACME_API_KEY", TOKEN + "-rotated")
    assert agent.mask(TOKEN + "-rotated") == "<redacted:ACME_API_KEY>"
    monkeypatch.delenv("ACME_API_KEY")
    assert agent.mask(TOKEN) == TOKEN  # no longer a credential: ordinary text again
    agent.configure(api_key_env="ACME_CREDS")  # a setting names a variable as a credential
    monkeypatch.setenv("ACME_CREDS", TOKEN)
    assert agent.mask(TOKEN) == "<redacted:ACME_CREDS>"


def test_dotenv_written_mid_turn_is_masked(nb: Path) -> None:
    def write() -> None:
        (nb / ".env").write_text(f"ACME_LOGIN={TOKEN}\n", encoding="utf-8")

    agent = _agent_with_tool(nb, write, f"login with {TOKEN}")
    turn = agent.ask("write the .env")
    blob = _blob(agent)
    assert TOKEN not in blob and TOKEN not in turn.text
    assert "now set: <redacted:ACME_LOGIN>" in blob
    # an edit of the same size (a rotated value) is seen too
    (nb / ".env").write_text(f"ACME_LOGIN={TOKEN[::-1]}\n", encoding="utf-8")
    assert agent.mask(TOKEN[::-1]) == "<redacted:ACME_LOGIN>"


def test_secrets_env_written_mid_turn_is_masked(nb: Path) -> None:
    def write() -> None:
        (nb / ".a0proj").mkdir(exist_ok=True)
        (nb / ".a0proj" / "secrets.env").write_text(f"ACME_PASS={TOKEN}\n", encoding="utf-8")

    agent = _agent_with_tool(nb, write, f"the password is {TOKEN}")
    turn = agent.ask("store the password")
    last = agent.calls[-1]
    assert TOKEN not in json.dumps(last.messages, ensure_ascii=False)  # the next request
    assert TOKEN not in _blob(agent) and TOKEN not in turn.text
    assert "now set: §§secret(ACME_PASS)" in _blob(agent)  # the tool's own output, the same step
    assert "the password is §§secret(ACME_PASS)" in last.response
    assert [e.key for e in agent.secrets.keys()] == ["ACME_PASS"]
    (nb / ".a0proj" / "secrets.env").write_text(f"ACME_PASS={TOKEN[::-1]}\n", encoding="utf-8")  # same size
    assert agent.mask(TOKEN[::-1]) == "§§secret(ACME_PASS)"


def test_user_home_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A0NB_HOME", str(tmp_path / "one"))
    assert user_home() == tmp_path / "one"
    monkeypatch.setenv("A0NB_HOME", str(tmp_path / "two"))
    assert user_home() == tmp_path / "two"
    monkeypatch.delenv("A0NB_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert user_home() == tmp_path / "h" / ".a0nb"


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    monkeypatch.delenv("A0NB_TRUST", raising=False)
    home, a, b = tmp_path / "home", tmp_path / "a", tmp_path / "b"
    for folder in (home, a, b):
        folder.mkdir()
        (folder / "tool.py").write_text("x = 1\n", encoding="utf-8")
    return home, a.resolve(), b.resolve()


def test_trust_and_untrust_are_seen_at_once(folders: tuple[Path, Path, Path]) -> None:
    home, a, _ = folders
    assert not folder_trust.is_trusted(a / "tool.py", home)
    folder_trust.trust(a, home)
    assert folder_trust.is_trusted(a / "tool.py", home)
    folder_trust.untrust(a, home)
    assert not folder_trust.is_trusted(a / "tool.py", home)


def test_trusted_list_written_by_another_process_is_seen(folders: tuple[Path, Path, Path]) -> None:
    home, a, b = folders
    listed = home / folder_trust.FILE_NAME
    listed.write_text(f"{a}\n", encoding="utf-8")
    assert folder_trust.is_trusted(a / "tool.py", home) and not folder_trust.is_trusted(b / "tool.py", home)
    listed.write_text(f"{b}\n", encoding="utf-8")  # the same size, rewritten in place
    assert not folder_trust.is_trusted(a / "tool.py", home) and folder_trust.is_trusted(b / "tool.py", home)
    listed.unlink()
    assert not folder_trust.is_trusted(b / "tool.py", home)


def test_env_trust_changes_are_seen(folders: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    home, a, b = folders
    monkeypatch.setenv("A0NB_TRUST", str(a))
    assert folder_trust.is_trusted(a / "tool.py", home) and not folder_trust.is_trusted(b, home)
    monkeypatch.setenv("A0NB_TRUST", str(b))
    assert not folder_trust.is_trusted(a / "tool.py", home) and folder_trust.is_trusted(b, home)
    monkeypatch.setenv("A0NB_TRUST", "*")
    assert folder_trust.is_trusted(a, home)
    monkeypatch.delenv("A0NB_TRUST")
    assert not folder_trust.is_trusted(a, home) and not folder_trust.is_trusted(b, home)


def test_a_retargeted_symlink_is_judged_again(folders: tuple[Path, Path, Path]) -> None:
    """A link in an untrusted folder that led into a trusted one, then leads elsewhere: not trusted any more."""
    home, a, b = folders
    folder_trust.trust(a, home)
    link = b / "link.py"
    link.symlink_to(a / "tool.py")
    assert folder_trust.is_trusted(link, home)
    link.unlink()
    link.symlink_to(b / "tool.py")
    assert not folder_trust.is_trusted(link, home)
    dirlink = b / "dir"
    dirlink.symlink_to(a)
    assert folder_trust.is_trusted(dirlink / "tool.py", home)
    dirlink.unlink()
    dirlink.symlink_to(b)
    assert not folder_trust.is_trusted(dirlink / "tool.py", home)


def test_a_trusted_link_that_leads_elsewhere_trusts_the_new_folder_only(folders: tuple[Path, Path, Path],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    home, a, b = folders
    link = home / "current"
    link.symlink_to(a)
    monkeypatch.setenv("A0NB_TRUST", str(link))
    assert folder_trust.is_trusted(a / "tool.py", home) and not folder_trust.is_trusted(b / "tool.py", home)
    link.unlink()
    link.symlink_to(b)
    assert not folder_trust.is_trusted(a / "tool.py", home) and folder_trust.is_trusted(b / "tool.py", home)


def test_untrusting_mid_session_stops_the_folder_s_code_at_the_next_step(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the agent: a prompt-variables loader of a trusted folder runs; once the folder is untrusted,
    the next step neither imports its new version nor uses its variables."""
    monkeypatch.delenv("A0NB_TRUST", raising=False)
    folder, marks = tmp_path / "nb", tmp_path / "marks"
    marks.mkdir()
    loader = folder / "prompts" / "agent.system.main.role.py"
    loader.parent.mkdir(parents=True)
    code = ("import pathlib\npathlib.Path({mark!r}).write_text('ran')\nfrom a0nb.ext import VariablesPlugin\n"
            "class V(VariablesPlugin):\n    def get_variables(self, file, backup_dirs=None, **kwargs):\n"
            "        return {{}}\n")
    loader.write_text(code.format(mark=str(marks / "first")), encoding="utf-8")
    a0nb.trust(folder)
    agent = Agent(folder, model=[answer("one"), answer("two")])
    agent.ask("hello")
    assert (marks / "first").exists()
    folder_trust.untrust(folder)
    loader.write_text(code.format(mark=str(marks / "second")) + "# edited\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", a0nb.UntrustedFolderWarning)
        agent.ask("again")
    assert not (marks / "second").exists()


def test_project_folder_behind_a_retargeted_link_is_read_again(tmp_path: Path) -> None:
    from a0nb.diagnostics import Diagnostics
    from a0nb.files.projects import ProjectCache
    one, two, link = tmp_path / "one", tmp_path / "two", tmp_path / "link"
    for folder, title in ((one, "One"), (two, "Two")):
        (folder / ".a0proj").mkdir(parents=True)
        (folder / ".a0proj" / "project.json").write_text(json.dumps({"title": title}), encoding="utf-8")
    link.symlink_to(one)
    cache = ProjectCache(Diagnostics(), home=tmp_path / "home")
    assert cache.get(link).title == "One" and cache.get(link).folder == one.resolve()
    os.unlink(link)
    link.symlink_to(two)
    assert cache.get(link).title == "Two" and cache.get(link).folder == two.resolve()


def test_history_text_sent_before_is_masked_once_it_becomes_a_secret(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The request's texts are remembered per secret set (they come back every step): a text that held no
    secret in the last request is masked in the next one once its value became a credential."""
    agent = Agent(nb, model=[answer("noted"), answer("ok")])
    agent.ask(f"remember {TOKEN}")
    assert TOKEN in json.dumps(agent.calls[-1].messages)  # not a secret yet: sent as it is
    monkeypatch.setenv("ACME_SESSION_TOKEN", TOKEN)
    agent.ask("and now?")
    sent = json.dumps(agent.calls[-1].messages, ensure_ascii=False)
    assert TOKEN not in sent and "remember <redacted:ACME_SESSION_TOKEN>" in sent
    assert [p for p in agent.calls[-1].parts if TOKEN in p.text] == []


# -- the step's secret set (kept from the step's first masking to its end, looked at again after a tool) ------

def _agent_with_echo(nb: Path, reply: str) -> Agent:
    """A turn of three steps: a reply with no tool request (no tool runs in that step), a tool request that
    quotes TOKEN for a tool that prints it, an answer that quotes it."""

    class Echo(Tool):
        async def execute(self, **kwargs: Any) -> Response:
            return Response(message=f"echo: {TOKEN}")

    agent = Agent(nb, model=["let me think", tool_reply("echo", note=TOKEN), answer(reply)])
    agent.register_tool(Echo, "echo")
    return agent


def _once(effect: Any) -> Any:
    """An extension that runs `effect` the first time it fires (in the middle of the turn's first step)."""
    done: list[bool] = []

    def ext(**kwargs: Any) -> None:
        if not done:
            done.append(True)
            effect()
    return ext


def test_secrets_env_written_mid_step_by_other_code_is_masked_from_the_next_step(nb: Path) -> None:
    """Written between the step's first masking and its model call (not by a tool): the next step's set has it."""
    def write() -> None:
        (nb / ".a0proj").mkdir(exist_ok=True)
        (nb / ".a0proj" / "secrets.env").write_text(f"ACME_PASS={TOKEN}\n", encoding="utf-8")

    agent = _agent_with_echo(nb, f"the password is {TOKEN}")
    agent.register_extension("before_main_llm_call", _once(write), name="writer")
    turn = agent.ask("echo it")
    assert TOKEN not in _blob(agent) and TOKEN not in turn.text
    assert "echo: §§secret(ACME_PASS)" in _blob(agent)
    assert "the password is §§secret(ACME_PASS)" in agent.calls[-1].response


def test_environment_credential_set_mid_step_by_other_code_is_masked_from_the_next_step(
        nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = _agent_with_echo(nb, f"the token is {TOKEN}")
    agent.register_extension("before_main_llm_call", _once(lambda: monkeypatch.setenv("ACME_SERVICE_TOKEN", TOKEN)),
                             name="setter")
    turn = agent.ask("echo it")
    assert TOKEN not in _blob(agent) and TOKEN not in turn.text
    assert "echo: <redacted:ACME_SERVICE_TOKEN>" in _blob(agent)


def test_a_tool_s_progress_after_it_wrote_a_secret_is_masked(nb: Path) -> None:
    """While a tool runs nothing is kept: its progress output is masked against the file it just wrote."""
    shown: list[str] = []

    class Writer(Tool):
        async def execute(self, **kwargs: Any) -> Response:
            (nb / ".env").write_text(f"ACME_LOGIN={TOKEN}\n", encoding="utf-8")
            self.set_progress(f"wrote {TOKEN}")
            (nb / ".env").write_text(f"ACME_LOGIN={TOKEN[::-1]}\n", encoding="utf-8")  # rotated, same size
            self.set_progress(f"rotated to {TOKEN[::-1]}")
            return Response(message="done")

    agent = Agent(nb, model=[tool_reply("noop"), tool_reply("writer"), answer("ok")])
    agent.register_tool(lambda: "nothing to see", name="noop")
    agent.register_tool(Writer, "writer")
    agent.register_extension("tool_output_update", lambda ctx=None, **kw: shown.append(ctx["content"]), name="shown")
    agent.ask("write it")
    assert shown and not any(TOKEN in s or TOKEN[::-1] in s for s in shown)
    assert "<redacted:ACME_LOGIN>" in shown[-1]


def test_after_a_turn_every_masking_looks_at_the_sources_again(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The step's set is a turn's: outside one, a change is seen by the very next masking."""
    agent = _agent_with_echo(nb, "fine")
    agent.ask("echo it")
    assert agent.mask(TOKEN) == TOKEN
    monkeypatch.setenv("ACME_SERVICE_TOKEN", TOKEN)
    assert agent.mask(TOKEN) == "<redacted:ACME_SERVICE_TOKEN>"
    monkeypatch.delenv("ACME_SERVICE_TOKEN")
    (nb / ".env").write_text(f"ACME_LOGIN={TOKEN}\n", encoding="utf-8")
    assert agent.mask(TOKEN) == "<redacted:ACME_LOGIN>"
    (nb / ".a0proj").mkdir(exist_ok=True)
    (nb / ".a0proj" / "secrets.env").write_text(f"ACME_PASS={TOKEN}\n", encoding="utf-8")
    assert agent.mask(TOKEN) == "§§secret(ACME_PASS)"


def test_a_tool_s_own_after_execution_is_masked_against_what_it_wrote(nb: Path) -> None:
    """A tool whose `after_execution` runs code of its own: that code may write a secret too."""

    class Late(Tool):
        async def execute(self, **kwargs: Any) -> Response:
            return Response(message="stored")

        async def after_execution(self, response: Response, **kwargs: Any) -> None:
            (nb / ".env").write_text(f"ACME_LOGIN={TOKEN}\n", encoding="utf-8")
            await self.agent.hist_add_tool_result(self.full_name, f"{response.message}: {TOKEN}")

    agent = Agent(nb, model=[tool_reply("noop"), tool_reply("late"), answer(f"it is {TOKEN}")])
    agent.register_tool(lambda: "nothing to see", name="noop")
    agent.register_tool(Late, "late")
    turn = agent.ask("store it")
    assert TOKEN not in _blob(agent) and TOKEN not in turn.text
    assert "stored: <redacted:ACME_LOGIN>" in _blob(agent)


def test_another_thread_masking_during_a_step_looks_at_the_sources(nb: Path) -> None:
    """The step's set is the loop thread's: a thread of the step's own (a tool's, one a timeout left behind)
    that writes a secret and masks its output sees the secret at once."""
    import threading
    seen: list[str] = []

    def from_a_thread() -> None:
        def work() -> None:
            (nb / ".env").write_text(f"ACME_LOGIN={TOKEN}\n", encoding="utf-8")
            seen.append(agent.mask(f"printed {TOKEN}"))
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()

    agent = Agent(nb, model=[tool_reply("noop"), answer("ok")])
    agent.register_tool(lambda: "nothing to see", name="noop")
    agent.register_extension("before_main_llm_call", _once(from_a_thread), name="threaded")
    agent.ask("go")
    assert seen == ["printed <redacted:ACME_LOGIN>"]


# -- a step's first look takes both secrets.env from the step's project check (one stat, not three) ---------

def test_a_project_check_outside_a_turn_never_stands_for_the_next_masking(nb: Path) -> None:
    agent = Agent(nb, model=[answer("ok")])
    agent.refresh()
    assert agent.project is not None  # a project check: it stats both secrets.env
    (nb / ".a0proj").mkdir(exist_ok=True)
    (nb / ".a0proj" / "secrets.env").write_text(f"ACME_PASS={TOKEN}\n", encoding="utf-8")
    assert agent.mask(TOKEN) == "§§secret(ACME_PASS)"  # looked at again, not taken from the check


def test_secrets_env_replaced_between_steps_with_the_same_size_and_time_is_seen(nb: Path) -> None:
    """Replaced (another inode) by code that is not a tool, keeping size and mtime: the next step's set has it."""
    other = TOKEN[::-1]
    secrets_env = nb / ".a0proj" / "secrets.env"
    secrets_env.parent.mkdir(exist_ok=True)
    secrets_env.write_text(f"ACME_PASS={TOKEN}\n", encoding="utf-8")

    def replace() -> None:
        st = os.stat(secrets_env)
        fresh = secrets_env.with_name("fresh.env")
        fresh.write_text(f"ACME_PASS={other}\n", encoding="utf-8")
        os.utime(fresh, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(fresh, secrets_env)

    agent = Agent(nb, model=["let me think", "still thinking", answer("ok")])
    agent.register_extension("message_loop_end", _once(replace), name="replacer")
    agent.ask(f"remember {other}")
    assert other in json.dumps(agent.calls[0].messages, ensure_ascii=False)  # not a secret yet
    for call in agent.calls[1:]:
        sent = json.dumps(call.messages, ensure_ascii=False)
        assert other not in sent and "remember §§secret(ACME_PASS)" in sent


def test_dotenv_written_between_steps_in_a_long_unchanged_folder_is_seen(nb: Path, monkeypatch: pytest.MonkeyPatch,
                                                                         file_events_on: bool) -> None:
    """A step skips the stat of a missing `.env` while its project check finds the notebook folder with the mtime it
    had when `.env` was found missing long after the folder's last change (with file events: stats nothing while
    no event came from the folder); writing `.env` changes that mtime (and is an event), so the next step's set
    has it."""
    old = time.time_ns() - 10_000_000_000 + 123_457  # long ago, on a clock with sub-millisecond digits
    os.utime(nb, ns=(old, old))
    dotenv = os.fspath(nb / ".env")
    stats: list[str] = []  # every look at a file: stat() or access()
    real, real_access = os.stat, os.access

    def stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        stats.append(os.fspath(path))
        return real(path, *args, **kwargs)

    def access(path: Any, *args: Any, **kwargs: Any) -> bool:
        stats.append(os.fspath(path))
        return real_access(path, *args, **kwargs)
    steps: list[int] = []

    def step_end(**kwargs: Any) -> None:
        steps.append(len(stats))
        if len(steps) == 3:
            (nb / ".env").write_text(f"ACME_TOKEN={TOKEN}\n", encoding="utf-8")

    agent = Agent(nb, model=[tool_reply("noop"), tool_reply("noop"), tool_reply("noop"), tool_reply("noop", note=TOKEN),
                             answer("ok")])
    agent.register_tool(lambda note="": "done", name="noop")
    agent.register_extension("message_loop_end", step_end, name="writer")
    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "access", access)
    agent.ask(f"remember {TOKEN}")
    monkeypatch.undo()
    third = stats[steps[1]:steps[2]]
    assert dotenv not in third
    assert (os.fspath(nb) in third) != file_events_on  # (the project check's stat of the folder vouched; or no event)
    assert TOKEN in json.dumps(agent.calls[2].messages, ensure_ascii=False)  # not a secret yet
    for call in agent.calls[3:]:
        assert TOKEN not in json.dumps(call.messages, ensure_ascii=False) + call.response


def test_dotenv_written_in_a_recently_changed_folder_is_seen_even_with_its_mtime_kept(nb: Path) -> None:
    """A folder whose mtime is recent (here: in the future) may change again without a new mtime: its `.env` is
    stat'ed at every step, so one written and hidden from the folder's mtime is seen at the next step."""
    stamp = time.time_ns() + 10_000_000_000 + 123_457
    os.utime(nb, ns=(stamp, stamp))
    steps: list[int] = []

    def step_end(**kwargs: Any) -> None:
        steps.append(1)
        if len(steps) == 3:
            (nb / ".env").write_text(f"ACME_TOKEN={TOKEN}\n", encoding="utf-8")
            os.utime(nb, ns=(stamp, stamp))

    agent = Agent(nb, model=[tool_reply("noop"), tool_reply("noop"), tool_reply("noop"), tool_reply("noop", note=TOKEN),
                             answer("ok")])
    agent.register_tool(lambda note="": "done", name="noop")
    agent.register_extension("message_loop_end", step_end, name="writer")
    agent.ask(f"remember {TOKEN}")
    assert TOKEN in json.dumps(agent.calls[2].messages, ensure_ascii=False)
    for call in agent.calls[3:]:
        assert TOKEN not in json.dumps(call.messages, ensure_ascii=False) + call.response


def test_a_secret_file_missing_at_its_last_look_is_seen_once_written_and_forgotten_once_removed(nb: Path) -> None:
    """A missing `.env` or `secrets.env` is looked for with access() at the next look (cheaper than a failing stat):
    written, it is read at the next masking; removed, its values are no longer masked (twice round, each file)."""
    (nb / ".a0proj").mkdir()
    agent = Agent(nb, model=[answer("ok")])
    files = [(nb / ".env", "ACME_LOGIN"), (user_home() / "secrets.env", "ACME_HOME"),
             (nb / ".a0proj" / "secrets.env", "ACME_PASS")]
    for value in (TOKEN, TOKEN[::-1]):
        for path, key in files:
            assert agent.mask(value) == value  # missing: found missing (and remembered so) ...
            assert agent.mask(value) == value  # ... and still missing at the look that remembered it
            path.write_text(f"{key}={value}\n", encoding="utf-8")
            assert agent.mask(value) != value, path  # written: seen at the next look
            assert key in agent.mask(value) or "secret" in agent.mask(value)
            path.unlink()
            assert agent.mask(value) == value, path  # removed: forgotten at the next look
