"""Time limits the agent's code cannot defeat (issue 19): `except Exception` does not swallow the code or
tool timeout, blocking child processes are killed, and a detached daemon neither blocks the tool nor
loses its output. Each scenario runs in its own process, so a timeout that fails fails the test, not the run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import a0nb

ROOT = Path(a0nb.__file__).resolve().parents[1]  # the a0nb under test (its bundled tools included)

SCRIPT = """
import json, sys, time
from pathlib import Path
from a0nb import Agent
from a0nb.testing import answer, tool_reply
nb = Path(sys.argv[1])
{setup}
start = time.monotonic()
turn = agent.ask("go")
print(json.dumps({{"results": [c.tool_result for c in turn.calls], "seconds": time.monotonic() - start,
                   "extra": extra()}}))
"""


def _run(tmp_path: Path, setup: str, limit: float = 40) -> dict[str, Any]:
    nb = tmp_path / "nb"
    nb.mkdir(exist_ok=True)
    script = SCRIPT.format(setup=textwrap.dedent(setup))
    env = {k: v for k, v in os.environ.items() if not k.startswith("A0NB_")}
    env.update(PYTHONPATH=str(ROOT), A0NB_HOME=str(tmp_path / "home"), A0NB_FROZEN_TIME="2026-01-31T09:30:00",
               A0NB_APPROVAL="auto", A0NB_TRUST=str(tmp_path))
    try:
        done = subprocess.run([sys.executable, "-c", script, str(nb)], capture_output=True, text=True,
                              timeout=limit, cwd=nb, env=env)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the agent's code was not stopped: the run still went on after {limit} s") from None
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_except_exception_does_not_swallow_the_code_timeout(tmp_path: Path) -> None:
    out = _run(tmp_path, """
        code = "import time\\nwhile True:\\n    try:\\n        time.sleep(0.01)\\n    except Exception:\\n        pass"
        agent = Agent(nb, model=[tool_reply("code_execution", runtime="python", code=code, timeout=0.5),
                                 answer("stopped")])
        extra = lambda: None
    """)
    assert "[stopped: the code ran longer than 0.5 s]" in out["results"][0]
    assert out["seconds"] < 10


def test_except_exception_does_not_swallow_the_tool_timeout(tmp_path: Path) -> None:
    out = _run(tmp_path, """
        import threading
        counter = [0]
        def spin() -> str:
            \"\"\"Never returns on its own.\"\"\"
            while True:
                try:
                    counter[0] += 1
                    time.sleep(0.01)
                except Exception:
                    pass
        agent = Agent(nb, model=[tool_reply("spin"), answer("stopped")], settings={"tool_timeout": 0.5})
        agent.register_tool(spin)
        def extra():
            time.sleep(0.5)
            before = counter[0]
            time.sleep(0.5)
            return {"still_counting": counter[0] != before,
                    "threads": [t.name for t in threading.enumerate() if t.name.startswith("a0nb-tool-spin")]}
    """)
    assert "did not finish within 0.5 s" in out["results"][0]
    assert out["extra"] == {"still_counting": False, "threads": []}


def test_blocking_child_process_is_killed_at_the_code_timeout(tmp_path: Path) -> None:
    out = _run(tmp_path, """
        code = "import os, subprocess\\nprint('started', flush=True)\\nos.system('sleep 30')\\nsubprocess.run(['sleep', '30'])"
        agent = Agent(nb, model=[tool_reply("code_execution", runtime="python", code=code, timeout=1),
                                 answer("stopped")])
        extra = lambda: None
    """)
    assert "started" in out["results"][0] and "[stopped: the code ran longer than 1 s]" in out["results"][0]
    assert out["seconds"] < 10


def test_setsid_daemon_neither_blocks_the_tool_nor_loses_its_output(tmp_path: Path) -> None:
    out = _run(tmp_path, """
        cmd = "echo before; setsid sh -c 'echo daemon-started; sleep 20; echo late' & echo after"
        agent = Agent(nb, model=[tool_reply("code_execution", runtime="terminal", code=cmd, timeout=15),
                                 answer("ok")])
        extra = lambda: None
    """)
    result = out["results"][0]
    assert "before" in result and "after" in result and "daemon-started" in result
    assert "background process" in result and "stopped" not in result
    assert out["seconds"] < 8


def test_python_daemon_child_does_not_block_the_tool(tmp_path: Path) -> None:
    out = _run(tmp_path, """
        code = ("import subprocess\\nprint('launching')\\n"
                "subprocess.Popen('echo child-up; sleep 20', shell=True, start_new_session=True)")
        agent = Agent(nb, model=[tool_reply("code_execution", runtime="python", code=code, timeout=15),
                                 answer("ok")])
        extra = lambda: None
    """)
    assert "launching" in out["results"][0]
    assert out["seconds"] < 8
