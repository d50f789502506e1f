"""Parsers (issue 19, item 8): reply extraction linear in the reply's size; every YAML file a folder or a
cassette brings is loaded with size and alias limits (one loader: a0nb/safe_yaml.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.engine import dirty_json
from a0nb.testing import answer

REPO = Path(__file__).resolve().parents[2]


def bomb(indent: str = "") -> str:
    """A billion-laughs document: nine lines whose aliases expand to 9**9 (387 million) strings."""
    lines = [f'{indent}a: &a ["x","x","x","x","x","x","x","x","x"]']
    prev = "a"
    for name in "bcdefghi":
        lines.append(f"{indent}{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = name
    return "\n".join(lines) + "\n"


def run_bounded(code: str, folder: Path, seconds: float = 60) -> str:
    """Run `code` in a fresh interpreter; a hang fails the test instead of hanging the suite."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "A0NB_TRUST": "*", "A0NB_HOME": str(folder / "home")}
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=folder, env=env, text=True,
                              capture_output=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not finish within {seconds:g} s (the YAML's aliases were expanded)")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_long_reply_with_many_braces_is_parsed_in_linear_time(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reply = '{"text": "' + "}" * 200_000  # an object that never closes, streamed in 8-character chunks
    fed: list[int] = []
    feed = dirty_json.DirtyJson.feed

    def counting(self: dirty_json.DirtyJson, text: str) -> object:
        fed.append(len(text))
        return feed(self, text)

    monkeypatch.setattr(dirty_json.DirtyJson, "feed", counting)
    agent = Agent(nb, model=[reply, answer("ok")], settings={"misformat_limit": 5})
    started = time.process_time()
    assert agent.ask("go").text == "ok"
    spent = time.process_time() - started
    assert sum(fed) <= 4 * len(reply)  # each character is parsed a bounded number of times (was ~n²/16)
    assert spent < 20  # a generous bound on a shared 2-core machine (was ~60 s)


def test_alias_bomb_in_skill_is_refused(tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "boom" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: boom\ndescription: a bomb\nmetadata:\n" + bomb("  ") + "---\nbody\n")
    out = run_bounded("""
        import json
        from a0nb import Agent
        agent = Agent(".")
        skills = agent.skills()
        for s in skills.values():
            json.dumps(s.metadata, default=str)  # whatever a0nb keeps can be walked (a cassette, an export)
        print(json.dumps([d.message for d in agent.diagnostics if d.area == "skill"]))
    """, tmp_path)
    assert "aliases" in out


def test_alias_bomb_in_plugin_yaml_is_refused(tmp_path: Path) -> None:
    manifest = tmp_path / "plugins" / "boomp" / "plugin.yaml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("name: boomp\n" + bomb())
    out = run_bounded("""
        import json
        from a0nb import Agent
        agent = Agent(".")
        for p in agent.hierarchy.plugins:
            json.dumps(dict(p.meta), default=str)
        print(json.dumps([d.message for d in agent.diagnostics if d.area == "plugin"]))
    """, tmp_path)
    assert "aliases" in out


@pytest.mark.parametrize("where", ["cassette", "scripted", "profile", "settings"])
def test_alias_bomb_elsewhere_is_a_clear_error(tmp_path: Path, where: str) -> None:
    if where == "cassette":
        (tmp_path / "c.cassette.yaml").write_text("- fingerprint: x\n  request: {}\n  response:\n" + bomb("    "))
        code = "from a0nb import Agent\ntry:\n    Agent('.', model='replay:c.cassette.yaml').ask('hi')\n" \
               "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    elif where == "scripted":
        (tmp_path / "r.yaml").write_text("- content:\n" + bomb("    "))
        code = "from a0nb import Agent\ntry:\n    Agent('.', model='scripted:r.yaml').ask('hi')\n" \
               "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    elif where == "profile":
        folder = tmp_path / "agents" / "boom"
        folder.mkdir(parents=True)
        (folder / "agent.yaml").write_text("title: boom\n" + bomb())
        code = "import json\nfrom a0nb import Agent\na = Agent('.')\nprofiles = a.profiles()\n" \
               "json.dumps({k: vars(v) for k, v in profiles.items()}, default=str)\n" \
               "print([d.message for d in a.diagnostics])\n"
    else:
        folder = tmp_path / "agents" / "default"
        folder.mkdir(parents=True)
        (folder / "settings.yaml").write_text("model_kwargs:\n" + bomb("  "))
        code = "import json\nfrom a0nb import Agent\na = Agent('.')\njson.dumps(a.settings.model_kwargs)\n" \
               "print([d.message for d in a.diagnostics])\n"
    out = run_bounded(code, tmp_path)
    assert "aliases" in out, out


def test_safe_yaml_keeps_ordinary_documents() -> None:
    from a0nb import safe_yaml
    assert safe_yaml.load("a: &x {k: 1}\nb: *x\nc: 'R&D & more'\n") == {"a": {"k": 1}, "b": {"k": 1}, "c": "R&D & more"}
    with pytest.raises(safe_yaml.YAMLLimitError):
        safe_yaml.load("x: 1\n" * 10, max_bytes=20)
    assert json.loads(json.dumps(safe_yaml.load("- [1, 2]\n- {a: b}\n"))) == [[1, 2], {"a": "b"}]
