"""Every sink a secret could reach (history, call records, the cassette, the live view, error messages,
rendered outputs, logs) holds none, whichever source it came from (issue 19)."""
from __future__ import annotations

import base64
import json
import logging
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from a0nb import Agent, inspector
from a0nb.errors import A0Error, TurnError
from a0nb.ext import Response, Tool
from a0nb.inspector import LiveTurn, Rendering
from a0nb.testing import answer, tool_reply

OPENAI = "sk-proj-Hq2Wc8Lx0Rv7Ta5Nb3Mz"


class FakeDisplay:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def show(self, obj: Any, display_id: str) -> None:
        self.events.append(obj)

    def update(self, obj: Any, display_id: str) -> None:
        self.events.append(obj)


def _blob(agent: Agent, *extra: Any) -> str:
    parts = [json.dumps(agent.history.to_dict(), ensure_ascii=False),
             json.dumps([c.to_dict() for c in agent.calls], default=str, ensure_ascii=False)]
    return "\n".join(parts + [json.dumps(e, default=str, ensure_ascii=False) for e in extra])


def _secrets_env(nb: Path, **values: str) -> None:
    (nb / ".a0proj").mkdir(exist_ok=True)
    (nb / ".a0proj" / "secrets.env").write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")


def test_intervention_keeps_tool_progress_masked(nb: Path) -> None:
    _secrets_env(nb, DB_PASSWORD="pw-Intervene-5531")

    class Slow(Tool):
        async def execute(self, **kwargs: Any) -> Response:
            self.set_progress("connecting with pw-Intervene-5531 ...")
            self.agent.intervene("stop, use the other database")
            return Response(message="done")

    agent = Agent(nb, model=[tool_reply("slow"), answer("switched")])
    agent.register_tool(Slow, "slow")
    agent.ask("connect")
    history = json.dumps(agent.history.to_dict())
    assert "connecting with" in history  # the progress was kept, as Agent Zero keeps it
    assert "pw-Intervene-5531" not in history


def test_provider_key_from_the_environment_is_masked_everywhere(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI)
    code = "import os\nprint('key', os.environ['OPENAI_API_KEY'])"
    agent = Agent(nb, model=f"record:c.yaml:{_script(nb, tool_reply('code_execution', runtime='python', code=code), answer('the key is ' + OPENAI))}")
    turn = agent.ask("show the key")
    rendered = inspector.render_turn(turn, agent=agent)._repr_mimebundle_()
    text = _blob(agent, turn.text, rendered) + (nb / "c.yaml").read_text(encoding="utf-8")
    assert "key <redacted:OPENAI_API_KEY>" in text
    assert OPENAI not in text


def test_cloud_and_database_credentials_are_masked_in_the_cassette(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    aws, url = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "postgresql://app:db-Pw-7781@db:5432/main"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", aws)
    monkeypatch.setenv("DATABASE_URL", url)
    spec = _script(nb, tool_reply("response", text=f"aws {aws} db {url} password db-Pw-7781"))
    agent = Agent(nb, model=f"record:c.yaml:{spec}")
    agent.ask(f"connect to {url} with {aws}")
    cassette = (nb / "c.yaml").read_text(encoding="utf-8")
    assert aws not in cassette and "db-Pw-7781" not in cassette and "<redacted:AWS_SECRET_ACCESS_KEY>" in cassette


def test_file_names_holding_secrets_are_masked_in_the_request(nb: Path) -> None:
    _secrets_env(nb, TOKEN="tok-FileName-9921")
    (nb / "backup-tok-FileName-9921.tar").write_text("x", encoding="utf-8")
    agent = Agent(nb, model=[answer("ok")])
    agent.ask("what files are here?")
    [call] = agent.calls
    assert "backup-§§secret(TOKEN).tar" in json.dumps(call.messages, ensure_ascii=False)
    assert "tok-FileName-9921" not in _blob(agent)


def test_a0error_messages_are_masked(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI)
    agent = Agent(nb, model=[f"my key is {OPENAI}"] * 3)
    with pytest.raises(TurnError) as info:
        agent.ask("hi")
    assert "replies in a row" in str(info.value)
    assert OPENAI not in str(info.value) and OPENAI not in (agent.turns[-1].error or "")


def test_approval_prompt_shows_aliases_not_values(nb: Path) -> None:
    _secrets_env(nb, DB_PASSWORD="pw-Approve-7712")
    shown: list[str] = []

    def approver(runtime: str, code: str) -> bool:
        shown.append(code)
        return False

    agent = Agent(nb, model=[tool_reply("code_execution", runtime="terminal", code="psql -p §§secret(DB_PASSWORD)"),
                             answer("ok")], settings={"approval": "ask"})
    agent.shared.approver = approver
    agent.ask("connect")
    assert shown and "pw-Approve-7712" not in shown[0] and "§§secret(DB_PASSWORD)" in shown[0]


def test_live_tail_cut_inside_a_secret_shows_none_of_it(nb: Path) -> None:
    from a0nb.inspector.live import TAIL
    secret = "sk-live-" + "Qw3rty" * 6
    _secrets_env(nb, API_KEY=secret)
    agent = Agent(nb, model=[answer("ok")])
    live = LiveTurn(agent, display=FakeDisplay()).start()
    filler = "x" * TAIL
    for text in (f"the key {secret} " + filler[: TAIL - len(secret) // 2 - 1],  # the tail starts inside it
                 f"{filler} and the key is {secret[:-5]}"):                    # the stream stops inside it
        live._apply({"response": text})
        shown = live.stream.value
        assert not any(secret[i:i + 8] in shown for i in range(len(secret) - 7)), shown[-120:]
    live.finish()


def _script(nb: Path, *replies: str, name: str = "replies.yaml") -> str:
    (nb / name).write_text(yaml.safe_dump(list(replies), allow_unicode=True), encoding="utf-8")
    return f"scripted:{name}"


# ---------------------------------------------------------------- every source, every sink

CREDENTIAL_NAMES = ("OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "STRIPE_SECRET", "DB_PASSWORD", "HF_TOKEN")
value = st.from_regex(r"[A-Za-z][A-Za-z0-9]{11,23}", fullmatch=True).filter(
    lambda v: any(c.isdigit() for c in v) and any(c.isupper() for c in v))


class _Sinks:
    """What leaves the agent while it runs: live-view events and log records."""

    def __init__(self, agent: Agent) -> None:
        self.events: list[str] = []
        agent.register_extension("tool_output_update", self.progress, name="sink_progress")

    def progress(self, ctx: Any = None, **kwargs: Any) -> None:
        self.events.append(json.dumps(ctx, ensure_ascii=False))


def _forms(secret: str) -> list[str]:
    raw = secret.encode()
    return [secret, quote_plus(secret), raw.hex(), base64.b64encode(raw).decode().rstrip("=")]


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), phases=[Phase.generate])
@given(declared=value, dotenv=value, env_value=value, env_name=st.sampled_from(CREDENTIAL_NAMES))
def test_random_secrets_from_every_source_reach_no_sink(tmp_path_factory: pytest.TempPathFactory,
                                                        capfd: pytest.CaptureFixture[str], declared: str, dotenv: str, env_value: str, env_name: str) -> None:
    if len({declared, dotenv, env_value}) < 3:
        return
    nb = tmp_path_factory.mktemp("nb")
    _secrets_env(nb, PLANTED=declared)
    (nb / ".env").write_text(f"SERVICE_LOGIN={dotenv}\n", encoding="utf-8")
    (nb / f"report-{dotenv}.txt").write_text("x", encoding="utf-8")  # a file name
    py = ("import os, base64, urllib.parse, threading\n"
          "v = os.environ[NAME]\n"
          "print('env', v, urllib.parse.quote_plus(v), v.encode().hex(), base64.b64encode(v.encode()).decode())\n"
          "print('declared', '§§secret(PLANTED)', base64.b64encode('§§secret(PLANTED)'.encode()).decode())\n"
          "os.system('echo fd-level $' + NAME)\n"
          "os.write(2, ('stderr ' + v + '\\n').encode())\n").replace("NAME", repr(env_name))
    replies = [tool_reply("code_execution", runtime="python", code=py),
               tool_reply("code_execution", runtime="terminal", code=f"cat .env; ls; echo ${env_name}"),
               tool_reply("boom", thoughts=f"the model echoes {declared} and {env_value}"),
               answer(f"done: {declared} {dotenv} {env_value}")]
    old = os.environ.get(env_name)
    os.environ[env_name] = env_value
    logger = logging.getLogger()
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger.addHandler(handler)
    try:
        agent = Agent(nb, model=f"record:c.yaml:{_script(nb, *replies)}")

        def boom(**kwargs: Any) -> str:
            """Fails with a secret in its message."""
            raise RuntimeError(f"cannot log in as {env_value}")

        agent.register_tool(boom, "boom")
        sinks = _Sinks(agent)
        live = LiveTurn(agent, display=FakeDisplay()).start()
        turn = agent.ask("go")
        live.finish(turn)
        errors = []
        agent.configure(model=[f"again {env_value}"] * 3)
        try:
            agent.ask("once more")
        except A0Error as exc:
            errors.append(str(exc))
        shown = [getattr(w, "value", "") for w in live._widgets if isinstance(getattr(w, "value", ""), str)]
        artifacts = {
            "history+records": _blob(agent, turn.text, errors),
            "cassette": (nb / "c.yaml").read_text(encoding="utf-8"),
            "rendered": json.dumps(inspector.render_turn(turn, agent=agent)._repr_mimebundle_(), default=str),
            "live events": "\n".join(sinks.events),
            "live widgets": "\n".join(shown + [json.dumps(e._repr_mimebundle_(), default=str) for e in live.sink.events
                                                if isinstance(e, Rendering)]),
        "process stdout/stderr": "".join(capfd.readouterr()),
            "logs": "\n".join(r.getMessage() for r in records),
        }
        seen = artifacts["history+records"]  # each source did reach the sinks, masked
        for arrived in ("env <redacted:", "fd-level <redacted:", "report-<redacted:SERVICE_LOGIN>.txt",
                        "cannot log in as <redacted:", "the model echoes §§secret(PLANTED)", "again <redacted:"):
            assert arrived in seen, arrived
        assert errors and sinks.events
    finally:
        logger.removeHandler(handler)
        if old is None:
            os.environ.pop(env_name, None)
        else:
            os.environ[env_name] = old
    leaks = [(where, form) for where, text in artifacts.items()
             for secret in (declared, dotenv, env_value) for form in _forms(secret) if form in text]
    assert leaks == []
