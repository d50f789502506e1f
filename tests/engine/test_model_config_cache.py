"""The model config is built once and reused, yet a change made mid-turn — agent.configure, an A0NB_*
variable, a settings file, a secret added to secrets.env or the environment — reaches the very next model call."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest

from a0nb import Agent
from a0nb.testing import answer, tool_reply


def _run(nb: Path, changes: list[Callable[[Agent], None]], **settings: Any) -> list[Any]:
    """One turn of len(changes) tool steps; step i's tool applies changes[i]; the config of every call."""
    agent = Agent(nb, model=[tool_reply("change", i=i) for i in range(len(changes))] + [answer("done")],
                  settings=settings)
    seen: list[Any] = []

    def change(i: int = 0) -> str:
        changes[i](agent)
        return "changed"

    async def record(call_data: dict[str, Any]) -> None:
        seen.append(call_data["config"])

    agent.register_tool(change)
    agent.register_extension("chat_model_call_before", record, name="record")
    assert agent.ask("go").text == "done"
    return seen


def test_unchanged_settings_give_equal_but_separate_configs(nb: Path) -> None:
    seen = _run(nb, [lambda a: None, lambda a: None], temperature=0.2, model_kwargs={"top_p": 0.5})
    assert seen[0] == seen[1] == seen[2] and seen[0].params == {"temperature": 0.2, "top_p": 0.5}
    assert seen[0] is not seen[1] and seen[0].params is not seen[1].params  # an extension may edit its copy


def test_an_extension_editing_its_config_does_not_reach_the_next_call(nb: Path) -> None:
    agent = Agent(nb, model=[tool_reply("noop"), answer("done")], settings={"temperature": 0.2})
    agent.register_tool(lambda: "ok", name="noop")
    seen: list[float] = []

    async def edit(call_data: dict[str, Any]) -> None:
        seen.append(call_data["config"].params["temperature"])
        call_data["config"].params["temperature"] = 9.0

    agent.register_extension("chat_model_call_before", edit, name="edit")
    agent.ask("go")
    assert seen == [0.2, 0.2]


def test_configure_mid_turn_reaches_the_next_call(nb: Path) -> None:
    seen = _run(nb, [lambda a: a.configure(temperature=0.7), lambda a: a.configure(ctx_length=5000)],
                temperature=0.1)
    assert [c.params.get("temperature") for c in seen] == [0.1, 0.7, 0.7]
    assert [c.ctx_length for c in seen][1:] == [128_000, 5000]


def test_environment_setting_mid_turn_reaches_the_next_call(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("A0NB_TEMPERATURE", raising=False)
    seen = _run(nb, [lambda a: monkeypatch.setenv("A0NB_TEMPERATURE", "0.4"),
                     lambda a: monkeypatch.delenv("A0NB_TEMPERATURE")])
    assert [c.params.get("temperature") for c in seen] == [None, 0.4, None]


def test_settings_file_edited_mid_turn_reaches_the_next_call(nb: Path) -> None:
    folder = nb / ".a0proj" / "plugins" / "_model_config"

    def write(a: Agent) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text('{"chat_model": {"kwargs": {"top_p": 0.3}}}')

    seen = _run(nb, [write])
    assert [c.params.get("top_p") for c in seen] == [None, 0.3]


def test_secret_added_mid_turn_reaches_the_next_call(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_SERVICE_API_KEY", raising=False)
    (nb / ".a0proj").mkdir()

    def add_file_secret(a: Agent) -> None:
        (nb / ".a0proj" / "secrets.env").write_text("FIRST_TOKEN=tok-file-123456\n")

    def add_env_secret(a: Agent) -> None:
        monkeypatch.setenv("MY_SERVICE_API_KEY", "sk-env-abcdef123456")

    seen = _run(nb, [add_file_secret, add_env_secret])
    values = [dict(c.params.get("_secret_values") or []) for c in seen]
    credentials = [dict(c.params.get("_credentials") or []) for c in seen]
    assert "FIRST_TOKEN" not in values[0] and values[1]["FIRST_TOKEN"] == "tok-file-123456"
    assert "MY_SERVICE_API_KEY" not in credentials[1]
    assert credentials[2]["MY_SERVICE_API_KEY"] == "sk-env-abcdef123456"
    assert os.environ["MY_SERVICE_API_KEY"] == "sk-env-abcdef123456"


def test_model_changed_mid_turn_answers_the_next_call(nb: Path) -> None:
    agent = Agent(nb, model=[tool_reply("switch"), answer("from the first list")])

    def switch() -> str:
        agent.configure(model=[answer("from the second list")])
        return "switched"

    agent.register_tool(switch)
    assert agent.ask("go").text == "from the second list"


def test_frozen_time_set_in_the_environment_is_read_at_once(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A0NB_FROZEN_TIME set (changed, removed) after the settings were resolved: the clock follows at once,
    the environment being read again only when it changed."""
    import datetime as dt
    monkeypatch.delenv("A0NB_FROZEN_TIME", raising=False)
    agent = Agent(nb, model=[answer("ok")])
    assert agent.settings.frozen_time is None
    monkeypatch.setenv("A0NB_FROZEN_TIME", "2026-02-03T04:05:06")
    assert agent.now() == dt.datetime(2026, 2, 3, 4, 5, 6)
    monkeypatch.setenv("A0NB_FROZEN_TIME", "2026-02-03T04:05:07")
    assert agent.now() == dt.datetime(2026, 2, 3, 4, 5, 7)
    monkeypatch.delenv("A0NB_FROZEN_TIME")
    assert abs((agent.now() - dt.datetime.now()).total_seconds()) < 5


def test_config_magic_layer_and_extension_limit_follow_each_change_mid_turn(nb: Path) -> None:
    # the resolved settings are kept (AgentSettings.current) until a layer changes: `%config` (its version), the
    # argument layer, a rebuild; the extension time limit follows the settings each time they are resolved again
    def magic(a: Agent) -> None:
        a.shared.magic_settings["temperature"] = 0.5

    limits: list[float | None] = []

    def limit(a: Agent) -> None:
        limits.append(a.extensions.timeout)
        a.configure(extension_timeout=7)

    def after(a: Agent) -> None:
        limits.append(a.extensions.timeout)
        a.shared.magic_settings.pop("temperature")

    seen = _run(nb, [magic, limit, after])
    assert [c.params.get("temperature") for c in seen] == [None, 0.5, 0.5, None]
    assert limits == [60.0, 7.0]


def test_the_clock_is_read_again_each_second_and_after_an_environment_change(
        nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """AgentSettings.now keeps the local time of one whole second: a new second, or a changed environment
    (a new TZ), gives the time anew, as datetime.now().replace(microsecond=0) would."""
    import datetime as dt
    import time as _time
    from a0nb.engine import config
    monkeypatch.delenv("A0NB_FROZEN_TIME", raising=False)
    agent = Agent(nb, model=[answer("ok")])
    clock = [1_800_000_000_250_000_000]
    monkeypatch.setattr(config.time, "time_ns", lambda: clock[0])
    first = agent.now()
    assert first == dt.datetime.fromtimestamp(1_800_000_000) and first.microsecond == 0
    clock[0] += 700_000_000  # the same second
    assert agent.now() is first
    clock[0] += 100_000_000  # the next one
    assert agent.now() == dt.datetime.fromtimestamp(1_800_000_001)
    if hasattr(_time, "tzset"):
        before = os.environ.get("TZ")
        try:
            for zone in ("UTC0", "XXX-5"):  # the same second in another zone: another local time
                os.environ["TZ"] = zone
                _time.tzset()
                assert agent.now() == dt.datetime.fromtimestamp(1_800_000_001)
            assert agent.now().hour == 13  # (08:00:01 UTC)
        finally:
            if before is None:
                os.environ.pop("TZ", None)
            else:
                os.environ["TZ"] = before
            _time.tzset()
