"""Concurrency and I/O (issue 19, item 7): locked, atomic writes; one turn at a time per agent; an I/O
error is a clear A0Error with the reply kept and the live view released."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from a0nb import A0Error, Agent
from a0nb.providers.cassette_format import load_cassette
from a0nb.testing import answer

REPO = Path(__file__).resolve().parents[2]


RECORDER = """
import json, sys
from pathlib import Path
from a0nb import Agent
from a0nb.testing import answer
name, cassette, turns = sys.argv[1], sys.argv[2], int(sys.argv[3])
folder = Path(name); folder.mkdir()
(folder / "replies.yaml").write_text(json.dumps([answer(f"{name} answer {i}") for i in range(turns)]))
agent = Agent(folder, model=f"record:{cassette}:scripted:replies.yaml")
for i in range(turns):
    agent.ask(f"{name} question {i}")
"""


def test_two_agents_recording_one_cassette_keep_every_entry(tmp_path: Path) -> None:
    """Two kernels (processes) record into one cassette at the same time: every entry is kept."""
    cassette = tmp_path / "shared.cassette.yaml"
    turns = 15
    env = {**os.environ, "PYTHONPATH": str(REPO), "A0NB_TRUST": "*", "A0NB_HOME": str(tmp_path / "home")}
    procs = [subprocess.Popen([sys.executable, "-c", RECORDER, name, str(cassette), str(turns)], cwd=tmp_path,
                              env=env, stderr=subprocess.PIPE, text=True) for name in ("left", "right")]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
    entries = load_cassette(cassette)
    contents = sorted(json.loads(e["response"]["content"])["tool_args"]["text"] for e in entries)
    assert len(entries) == 2 * turns, f"{2 * turns - len(entries)} entries were lost"
    assert contents == sorted(f"{n} answer {i}" for n in ("left", "right") for i in range(turns))
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith((".tmp", ".lock"))]


def test_a_second_concurrent_ask_gets_a_clear_error(nb: Path) -> None:
    started, release = threading.Event(), threading.Event()

    async def slow(agent: Any) -> str:
        """Wait until the test says so."""
        started.set()
        while not release.is_set():
            await asyncio.sleep(0.01)
        return "slow done"

    from a0nb.testing import tool_reply
    agent = Agent(nb, model=[tool_reply("slow"), answer("first"), answer("second")])
    agent.register_tool(slow)
    first: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: first.setdefault("turn", agent.ask("one")))
    worker.start()
    assert started.wait(30)
    try:
        with pytest.raises(A0Error, match="still running turn 1"):
            agent.ask("two")
    finally:
        release.set()
        worker.join(30)
    assert first["turn"].text == "first"
    assert [m.content for m in agent.history.messages() if not m.ai][0] != "two"
    assert agent.ask("three").text == "second"  # and the agent goes on
    user_texts = [m.text() for m in agent.history.messages() if not m.ai]
    assert not any("two" in t for t in user_texts)  # the refused ask left nothing in history


def test_invalid_utf8_cassette_is_a_clear_error(nb: Path) -> None:
    (nb / "bad.cassette.yaml").write_bytes(b"- fingerprint: x\n  response: {content: caf\xe9}\n")
    with pytest.raises(A0Error) as info:
        Agent(nb, model="replay:bad.cassette.yaml").ask("hi")
    message = str(info.value)
    assert "bad.cassette.yaml" in message and "UTF-8" in message and "line 2" in message


DISK_FULL = """
    import json, os, resource, signal
    from pathlib import Path
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.displaypub import CapturingDisplayPublisher
    from traitlets.config import Config
    from a0nb.notebook.magics import A0Magics
    from a0nb.testing import answer
    A0Magics.interactive = lambda self: True          # a front end: the live view is used
    Path("r.yaml").write_text(json.dumps([answer("the answer survives")]))
    Path("trace.html").write_text("<html>the previous trace</html>")
    cfg = Config(); cfg.HistoryManager.hist_file = ":memory:"
    sh = InteractiveShell.instance(config=cfg)
    sh.display_pub = CapturingDisplayPublisher()
    sh.run_line_magic("load_ext", "a0nb")
    sh.run_line_magic("config", 'A0.approval = "auto"')
    sh.run_line_magic("a0", "model scripted:r.yaml")
    sh.run_line_magic("a0", "record c.cassette.yaml")
    agent = sh.magics_manager.registry["A0Magics"].agent
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)     # a write past the limit fails with EFBIG, like a full disk
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))
    sh.run_line_magic("a0", "ask hello")
    sh.run_line_magic("a0", "inspect --export trace.html")
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    live = [n for point, names in agent.extensions.registered.items() for n in names if n.startswith(("_00_", "_90_", "_99_"))]
    print(json.dumps({
        "outputs": [o["data"].get("text/plain", "") for o in sh.display_pub.outputs],
        "history": [m.text() for m in agent.history.messages() if m.ai],
        "live": live,
        "trace": Path("trace.html").read_text(),
        "tmp": sorted(p.name for p in Path(".").iterdir() if p.name.endswith(".tmp")),
    }))
"""


def test_disk_full_is_a_clear_error_that_keeps_the_reply(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "A0NB_TRUST": "*", "A0NB_HOME": str(tmp_path / "home")}
    env.pop("A0NB_APPROVAL", None)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(DISK_FULL)], cwd=tmp_path, env=env, text=True,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    errors = [o for o in result["outputs"] if "could not" in o]
    assert len(errors) == 2, result["outputs"]
    assert errors[0].startswith("ModelError: ") and "c.cassette.yaml" in errors[0] and "kept in history" in errors[0]
    assert errors[1].startswith("StorageError: ") and "trace.html" in errors[1]
    assert any("the answer survives" in h for h in result["history"])  # the reply is not lost
    assert result["live"] == []          # the live view stopped listening to the agent
    assert result["trace"] == "<html>the previous trace</html>"  # not truncated
    assert result["tmp"] == []
