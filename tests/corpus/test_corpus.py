"""The bad-input corpus, run end to end: every model reply in replies/ and every broken-file case in files/
goes through a fresh Agent; the loop must hold (clean A0Error at worst, bounded calls, cause named,
history consistent, next ask working)."""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from a0nb import Agent
from a0nb.errors import A0Error, Misformat, TurnError
from a0nb.engine.extract import ToolRequest, parse_tool_request
from a0nb.testing import answer, tool_reply

HERE = Path(__file__).resolve().parent
REPLIES = sorted((HERE / "replies").glob("*.txt"))
FILE_CASES = sorted(d for d in (HERE / "files").iterdir() if d.is_dir())
# short limits so hanging inputs cost about a second each; no backoff between retries
SETTINGS: dict[str, Any] = {"code_timeout": 1, "extension_timeout": 1, "tool_timeout": 2, "backoff": 0}
OPTIONS: dict[str, Any] = {"entry_points": False}  # pip-installed plugins are not under test (and cost ~20 ms)
FIRST, SECOND, THIRD = "first normal answer", "second normal answer", "third normal answer"
NORMAL = (answer(FIRST), answer(SECOND), answer(THIRD))


def test_corpus_is_large_enough() -> None:
    assert len(REPLIES) >= 150, f"only {len(REPLIES)} replies; run tests/corpus/make_replies.py"
    assert len(FILE_CASES) >= 40, f"only {len(FILE_CASES)} file cases"


# ---------------------------------------------------------------------------- helpers


@dataclass
class Outcome:
    """What one `ask` did: its turn, or the clean error it raised."""

    turn: Any = None
    error: A0Error | None = None

    @property
    def message(self) -> str:
        return str(self.error) if self.error is not None else ""


def ask(agent: Agent, text: str) -> Outcome:
    """One ask; anything but an A0Error subclass escapes and fails the test."""
    try:
        return Outcome(turn=agent.ask(text))
    except A0Error as exc:
        return Outcome(error=exc)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings(v)


def history_text(agent: Agent) -> str:
    return "\n".join(s for m in agent.history.messages() for s in strings(m.content))


def turn_calls(agent: Agent, index: int) -> list[Any]:
    return [c for c in agent.calls if c.turn == index and c.role == "chat"]


def check_consistent(agent: Agent) -> None:
    problems = agent.history.validate()
    assert problems == [], "history inconsistent:\n" + "\n".join(problems)


def check_bounded(agent: Agent, index: int) -> None:
    limit = agent.settings.misformat_limit + 2
    calls = turn_calls(agent, index)
    assert len(calls) <= limit, f"turn {index} made {len(calls)} model calls (bound {limit})"


def check_next_ask(agent: Agent) -> None:
    index = len(agent.turns) + 1
    outcome = ask(agent, "now a normal question")
    assert outcome.error is None, f"the next ask failed: {outcome.message}"
    assert outcome.turn.ok and outcome.turn.text in (FIRST, SECOND, THIRD), outcome.turn
    check_bounded(agent, index)
    check_consistent(agent)


def close(agent: Agent | None) -> None:
    if agent is not None:
        agent.shared.bridge.close()


# ---------------------------------------------------------------------------- model replies


def read_reply(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def known_tool(agent: Agent, name: str) -> bool:
    try:
        return agent.tools.resolve(name) is not None
    except OSError:  # Tools.resolve stats tools/<name>.py; a 10k-character name is refused by the file system
        return False


def check_reply_cause(agent: Agent, first: Outcome) -> None:
    """A misformat must come back to the model (or the user) with its reason; an unknown tool by name."""
    calls = turn_calls(agent, 1)
    assert calls, "no model call was recorded for the corpus reply"
    seen = calls[0].response or ""
    parsed = parse_tool_request(seen)
    assert isinstance(parsed, (ToolRequest, Misformat))
    told = history_text(agent) + "\n" + first.message
    if isinstance(parsed, Misformat):
        reason = str(parsed)[:80]
        assert reason in told, f"the misformat reason {reason!r} was not given back"
        return
    code = str(parsed.tool_args.get("code", ""))
    if parsed.tool_name == "code_execution" and ("sleep" in code or "while True" in code):
        assert "[stopped: the" in told, "hanging code was not stopped by code_timeout"
    if not known_tool(agent, parsed.tool_name):
        assert parsed.tool_name[:60] in told or agent.mask(parsed.tool_name)[:60] in told, \
            f"unknown tool {parsed.tool_name[:60]!r} was not named back to the model"


def check_breaker(agent: Agent, reply: str) -> None:
    """The same bad reply again and again trips the circuit breaker after misformat_limit calls."""
    limit = agent.settings.misformat_limit
    agent.configure(model=[reply] * limit + [answer(THIRD)])
    index = len(agent.turns) + 1
    outcome = ask(agent, "once more")
    assert isinstance(outcome.error, TurnError), f"expected the circuit breaker, got {outcome.turn or outcome.error!r}"
    assert "replies in a row" in outcome.message
    assert len(turn_calls(agent, index)) == limit
    check_consistent(agent)


@pytest.mark.parametrize("path", REPLIES, ids=[p.stem for p in REPLIES])
def test_reply(path: Path, nb: Path, corpus_tally: Any) -> None:
    reply = read_reply(path)
    with corpus_tally.trial():
        agent = Agent(nb, model=[reply, *NORMAL], settings=SETTINGS, **OPTIONS)
        try:
            first = ask(agent, "corpus input")
            check_bounded(agent, 1)
            check_reply_cause(agent, first)
            check_consistent(agent)
            assert "root:x:0:0" not in history_text(agent)
            check_next_ask(agent)
            if isinstance(parse_tool_request(turn_calls(agent, 1)[0].response or ""), Misformat):
                check_breaker(agent, reply)
                check_next_ask(agent)
        finally:
            close(agent)


# ---------------------------------------------------------------------------- broken files


def load_case(folder: Path) -> dict[str, Any]:
    meta = yaml.safe_load((folder / "case.yaml").read_text(encoding="utf-8")) or {}
    assert isinstance(meta, dict) and meta.get("cause"), f"{folder}/case.yaml needs `cause:`"
    return meta


def install(folder: Path, nb: Path, meta: dict[str, Any]) -> None:
    """Copy the case's layout into the notebook folder (case.yaml stays behind) and make its links."""
    for item in folder.iterdir():
        if item.name == "case.yaml":
            continue
        target = nb / item.name
        if item.is_dir():
            shutil.copytree(item, target, symlinks=True)
        else:
            shutil.copy2(item, target)
    for rel, points_to in (meta.get("symlinks") or {}).items():
        link = nb / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(points_to, link)


def scripted_replies(meta: dict[str, Any]) -> list[str]:
    out = []
    for item in meta.get("replies") or []:
        if isinstance(item, dict):
            out.append(tool_reply(item["tool"], **(item.get("args") or {})))
        else:
            out.append(str(item))
    return out + list(NORMAL)


def apply_fix(nb: Path, meta: dict[str, Any]) -> None:
    """What the user does after reading the error: delete the broken files the case names under `fix`."""
    for rel in meta.get("fix") or []:
        path = nb / rel
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


def told(agent: Agent | None, errors: list[str]) -> list[str]:
    """Where a cause can be named: raised errors, diagnostics, and tool results given to the model."""
    texts = list(errors)
    if agent is not None:
        texts += [str(d) for d in agent.diagnostics]
        texts += ["\n".join(strings(m.content)) for m in agent.history.messages() if m.kind == "tool_result"]
    return texts


def check_cause_named(agent: Agent | None, meta: dict[str, Any], errors: list[str]) -> None:
    """The broken file (its name, or the text the case gives as `cause`) and any `expect` text are told."""
    cause = str(meta["cause"])
    needle = Path(cause).name if "/" in cause and not cause.startswith(("/", "..", "'")) else cause
    texts = told(agent, errors)
    for want in (needle, meta.get("expect")):
        if want:
            assert any(want in t for t in texts), f"nothing names {want!r}; told:\n" + "\n".join(texts)


def touch_listings(agent: Agent) -> None:
    """What `%a0` shows: profiles, skills and tools are listed (each must not raise)."""
    agent.profiles()
    agent.skills()
    agent.tools.available()


@pytest.mark.parametrize("folder", FILE_CASES, ids=[d.name for d in FILE_CASES])
def test_file_case(folder: Path, nb: Path, corpus_tally: Any) -> None:
    meta = load_case(folder)
    if meta.get("gap"):
        corpus_tally.skipped.append(folder.name)
        pytest.skip(f"known gap: {meta['gap']}")
    install(folder, nb, meta)
    replies = scripted_replies(meta)
    profile = meta.get("profile", "default")
    with corpus_tally.trial():
        errors: list[str] = []
        agent: Agent | None = None
        try:
            try:
                agent = Agent(nb, model=replies, profile=profile, settings=SETTINGS, **OPTIONS)
            except A0Error as exc:  # e.g. an agent_init extension that fails: named, then fixed
                errors.append(str(exc))
            if agent is not None:
                first = ask(agent, "corpus input")
                if first.error is not None:
                    errors.append(first.message)
                check_bounded(agent, 1)
                check_consistent(agent)
                touch_listings(agent)
            check_cause_named(agent, meta, errors)
            forbid = meta.get("forbid")
            if forbid and agent is not None:
                assert forbid not in history_text(agent) and forbid not in json.dumps(
                    [c.response for c in agent.calls]), "forbidden content reached the model or history"
            if errors:
                apply_fix(nb, meta)
            if agent is None:
                agent = Agent(nb, model=replies[len(replies) - len(NORMAL):], profile=profile, settings=SETTINGS,
                              **OPTIONS)
            check_next_ask(agent)
        finally:
            close(agent)


# ---------------------------------------------------------------------------- extension isolation


def test_env_limit_stops_a_hanging_notebook_extension(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A0NB_EXTENSION_TIMEOUT limits a sync extension registered from a cell; the error and a diagnostic name it."""
    import time

    from a0nb.errors import ExtensionError
    monkeypatch.setenv("A0NB_EXTENSION_TIMEOUT", "0.5")
    agent = Agent(nb, model=list(NORMAL), settings={"backoff": 0}, **OPTIONS)
    try:
        def stuck_cell_hook(**kwargs: Any) -> None:
            time.sleep(600)

        agent.register_extension("message_loop_start", stuck_cell_hook)
        outcome = ask(agent, "hi")
        assert isinstance(outcome.error, ExtensionError) and "stuck_cell_hook" in outcome.message
        assert "0.5 s" in outcome.message and "A0NB_EXTENSION_TIMEOUT" in outcome.message
        assert any("stuck_cell_hook" in str(d) for d in agent.diagnostics.of("extension"))
        check_consistent(agent)
        agent.extensions.unregister("message_loop_start", "stuck_cell_hook")
        check_next_ask(agent)
    finally:
        close(agent)


def test_a_quick_extension_that_turns_slow_goes_back_to_a_worker(nb: Path) -> None:
    """Known-quick extensions run inline; one slow run sends them back to a worker, where a hang is cut off."""
    import time

    from a0nb.files import extensions
    from a0nb.errors import ExtensionError
    agent = Agent(nb, model=[*NORMAL, *NORMAL],
                  settings={"backoff": 0, "extension_timeout": 0.5}, **OPTIONS)
    delays: list[float] = [0.0] * extensions.QUICK_RUNS + [0.2, 600.0]

    def moody(**kwargs: Any) -> None:
        time.sleep(delays.pop(0) if delays else 0.0)

    try:
        agent.register_extension("monologue_start", moody)
        for _ in range(extensions.QUICK_RUNS + 1):  # three quick runs in a worker, then one slow run inline
            assert ask(agent, "hi").error is None
        assert agent.extensions._quick[moody] == 0  # demoted by the slow inline run
        outcome = ask(agent, "hi")  # the hang now happens in a worker thread and is cut off
        assert isinstance(outcome.error, ExtensionError) and "moody" in outcome.message
        check_consistent(agent)
        check_next_ask(agent)
    finally:
        close(agent)
