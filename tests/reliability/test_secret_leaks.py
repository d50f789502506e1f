"""Secret-leak scan: a session that passes `§§secret(...)` values through tools, records a cassette, exports
and renders every view, and runs the same through the magics in a saved notebook — no artifact holds a secret."""
from __future__ import annotations

import json
import logging
import os
import secrets as rnd
from pathlib import Path
from typing import Any

import pytest
import yaml

from a0nb import Agent
from a0nb import inspector
from a0nb.testing import answer, tool_reply

REPO = Path(__file__).resolve().parents[2]
NAMES = ("DB_PASSWORD", "API_TOKEN", "SIGNING_KEY")
PANELS = ("render_prompt", "render_extras", "render_history", "render_skills", "render_tools",
          "render_extensions", "render_paths", "render_diagnostics")


def _replies(echo_calls: bool) -> str:
    replies = [
        tool_reply("code_execution", runtime="python", code='print("db=§§secret(DB_PASSWORD)")'),
        tool_reply("code_execution", runtime="terminal", code="echo sig=§§secret(SIGNING_KEY)"),
    ]
    if echo_calls:
        replies.append(tool_reply("echo", text="token=§§secret(API_TOKEN)"))
    replies.append(answer("Done: the password is §§secret(DB_PASSWORD)."))
    return yaml.safe_dump(replies, allow_unicode=True)


def _folder(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    nb = tmp_path / "nb"
    (nb / ".a0proj").mkdir(parents=True)
    values = {name: f"{name.lower()}-{rnd.token_urlsafe(18)}" for name in NAMES}
    (nb / ".a0proj" / "secrets.env").write_text(
        "".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")
    (nb / "replies.yaml").write_text(_replies(echo_calls=True), encoding="utf-8")
    (nb / "nb_replies.yaml").write_text(_replies(echo_calls=True), encoding="utf-8")
    return nb, values


def _bundle_text(rendering: Any) -> str:
    data, meta = rendering._repr_mimebundle_()
    return json.dumps([data, meta], default=str, ensure_ascii=False)


NOTEBOOK_CELLS = [
    "%load_ext a0nb",
    "from a0nb.notebook.magics import get_magics\n"
    "_received = []\n"
    "def echo(text: str) -> str:\n"
    "    \"\"\"Echo the text back.\"\"\"\n"
    "    _received.append(text)\n"
    "    return 'echo: ' + text\n"
    "get_magics(get_ipython()).agent.register_tool(echo, 'echo')",
    "%a0 model record:nb.cassette.yaml:scripted:nb_replies.yaml",
    "%a0 ask Use the secrets, please.",
    "%a0 inspect",
    "%a0 history",
    "%a0 prompt",
    "%a0 extras",
    "%a0 tools",
    "%a0 diagnostics",
    "%a0 skills",
    "%a0 extensions",
    "%a0 paths",
    "%a0 inspect --export trace.html",
    "%a0 inspect --export trace.jsonl",
    "print(len(_received), all('§§' not in r for r in _received))",
]


def _run_notebook(nb: Path, env_extra: dict[str, str]) -> tuple[Path, str]:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in NOTEBOOK_CELLS])
    env = {k: v for k, v in os.environ.items() if not k.startswith("A0NB_")}
    env.update(env_extra, PYTHONPATH=str(REPO), A0NB_HOME=str(nb.parent / "home"), A0NB_APPROVAL="auto", A0NB_TRUST=str(nb.parent),
               A0NB_FROZEN_TIME="2026-01-31T09:30:00", LITELLM_LOCAL_MODEL_COST_MAP="True",
               LITELLM_OFFLINE_MODE="true")
    client = NotebookClient(notebook, timeout=60, kernel_name="python3", store_widget_state=False,
                            resources={"metadata": {"path": str(nb)}})
    client.execute(env=env)
    path = nb / "executed.ipynb"  # saved as a user would save it
    nbformat.write(notebook, path)
    return path, path.read_text(encoding="utf-8")


def test_no_secret_leaks_in_any_artifact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    nb, values = _folder(tmp_path)
    api_key = f"sk-test-{rnd.token_urlsafe(24)}"
    for k in [k for k in os.environ if k.startswith("A0NB_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("OPENAI_API_KEY", api_key)
    monkeypatch.setenv("A0NB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("A0NB_FROZEN_TIME", "2026-01-31T09:30:00")
    monkeypatch.setenv("A0NB_TRUST", "*")
    monkeypatch.chdir(nb)
    artifacts: dict[str, str] = {}

    # -- the Python API ----------------------------------------------------------------------------
    received: list[str] = []

    def echo(text: str) -> str:
        """Echo the text back."""
        received.append(text)
        return "echo: " + text

    agent = Agent(nb, model="record:leak.cassette.yaml:scripted:replies.yaml", settings={"approval": "auto"})
    agent.register_tool(echo, "echo")
    turn = agent.ask("Use the secrets, please.")
    assert received == [f"token={values['API_TOKEN']}"], "the tool did not receive the real secret value"
    results = json.dumps(agent.history.to_dict(), ensure_ascii=False)
    assert "db=§§secret(DB_PASSWORD)" in results and "sig=§§secret(SIGNING_KEY)" in results, \
        "the tool outputs held the real values and were masked back to aliases"

    artifacts["turn.text"] = turn.text
    artifacts["history.to_dict"] = results
    for c in agent.calls:
        artifacts[f"record {c.index}.to_dict"] = json.dumps(c.to_dict(), default=str, ensure_ascii=False)
        artifacts[f"render_call {c.index}"] = _bundle_text(inspector.render_call(c, agent=agent))
    chat = [c for c in agent.calls if c.role == "chat"]
    artifacts["render_turn"] = _bundle_text(inspector.render_turn(turn, agent=agent))
    artifacts["render_diff"] = _bundle_text(inspector.render_diff(chat[0], chat[-1], agent=agent))
    for name in PANELS:
        artifacts[name] = _bundle_text(getattr(inspector, name)(agent))
    for suffix in ("html", "jsonl"):
        path = inspector.export_trace(agent, nb / f"api-trace.{suffix}")
        artifacts[path.name] = path.read_text(encoding="utf-8")
    artifacts["leak.cassette.yaml"] = (nb / "leak.cassette.yaml").read_text(encoding="utf-8")
    artifacts["diagnostics"] = repr(agent.diagnostics) + json.dumps(
        [vars(d) if hasattr(d, "__dict__") else str(d) for d in agent.diagnostics], default=str)

    # -- the same through the magics, in a notebook executed by a real kernel ----------------------
    executed, text = _run_notebook(nb, {"OPENAI_API_KEY": api_key})
    artifacts["executed.ipynb"] = text
    outputs = [o for cell in json.loads(text)["cells"] for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"], "a notebook cell raised"
    assert "1 True" in json.dumps(outputs), "the notebook's echo tool did not receive the resolved value"
    for name in ("trace.html", "trace.jsonl", "nb.cassette.yaml"):
        artifacts[name] = (nb / name).read_text(encoding="utf-8")

    captured = capfd.readouterr()
    artifacts["stdout"], artifacts["stderr"] = captured.out, captured.err
    artifacts["logs"] = "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    # every other file the session left in the folder (except the secrets file itself)
    for path in sorted(nb.rglob("*")):
        rel = path.relative_to(nb).as_posix()
        if path.is_file() and rel != ".a0proj/secrets.env" and rel not in artifacts and "__pycache__" not in rel:
            artifacts[f"file {rel}"] = path.read_text(encoding="utf-8", errors="replace")

    needles = {**values, "OPENAI_API_KEY": api_key}
    source = (nb / ".a0proj" / "secrets.env").read_text(encoding="utf-8")
    assert all(v in source for v in values.values())  # the scan sees a value where one really is
    found = [(name, where) for where, body in artifacts.items() for name, value in needles.items() if value in body]
    print(f"\nleaks: {len(artifacts)} artifacts scanned, {len(found)} secret values found")
    assert found == [], f"secret values leaked: {found}"
    assert len(artifacts) >= 25
