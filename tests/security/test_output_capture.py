"""Agent code output captured at the file-descriptor level (issue 19): whatever writes it (print, os.system,
child processes, C code, sys.__stdout__, display(), threads that outlive the run) it reaches the tool
result masked, never the notebook or the kernel log unmasked; it is bounded (head + tail), streams to the
live view while the code runs, and a multi-gigabyte flood leaves the process memory bounded."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

import a0nb
from a0nb import Agent
from a0nb.testing import answer, tool_reply

ROOT = Path(a0nb.__file__).resolve().parents[1]  # the a0nb under test (its bundled tools included)
KEY = "sk-proj-Fd7Lq2Wx9Rb4Tc8Nm1Vz"

FD_CODE = """\
import ctypes, os, subprocess, sys
key = os.environ['OPENAI_API_KEY']
print('print', key)
os.system('echo system $OPENAI_API_KEY')
subprocess.run(['echo', 'child', key])
sys.__stdout__.write('dunder ' + key + '\\n')
line = ('libc ' + key + '\\n').encode()
ctypes.CDLL(None).write(1, line, len(line))
os.write(2, ('fd2 ' + key + '\\n').encode())
"""


def test_fd_level_output_reaches_the_result_masked_and_nothing_else(nb: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    agent = Agent(nb, model=[tool_reply("code_execution", runtime="python", code=FD_CODE), answer("ok")])
    turn = agent.ask("run it")
    result = turn.calls[0].tool_result or ""
    for source in ("print", "system", "child", "dunder", "libc", "fd2"):
        assert f"{source} <redacted:OPENAI_API_KEY>" in result, (source, result)
    process = "".join(capfd.readouterr())
    assert KEY not in process and KEY not in json.dumps(agent.history.to_dict())


def test_output_is_bounded_to_head_and_tail(nb: Path) -> None:
    code = "for i in range(200_000):\n    print('line', i)"
    agent = Agent(nb, model=[tool_reply("code_execution", runtime="python", code=code), answer("ok")],
                  settings={"output_limit": 4000, "output_cap": 1_000_000})
    result = agent.ask("flood").calls[0].tool_result or ""
    assert result.startswith("line 0\nline 1\n") and result.rstrip().endswith("line 199999")
    assert "characters of output not kept" in result
    assert len(result) < 4200


def test_live_view_gets_masked_chunks_while_the_code_runs(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    code = "import os, time\nprint('first', os.environ['OPENAI_API_KEY'], flush=True)\ntime.sleep(1.5)\nprint('second')"
    agent = Agent(nb, model=[tool_reply("code_execution", runtime="python", code=code), answer("ok")])
    events: list[tuple[float, str]] = []
    ended: list[float] = []
    agent.register_extension("tool_output_update", lambda ctx=None, **kw: events.append((time.monotonic(), ctx["content"])),
                             name="progress_probe")
    agent.register_extension("tool_execute_after", lambda **kw: ended.append(time.monotonic()), name="end_probe")
    agent.ask("run")
    early = [content for t, content in events if t < ended[0] - 0.8]
    assert any("first <redacted:OPENAI_API_KEY>" in content for content in early)
    assert all(KEY not in content for _, content in events)
    assert "second" in events[-1][1]


def test_live_view_is_not_sent_the_same_output_twice_at_the_end() -> None:
    from a0nb.engine.capture import Capture
    from a0nb.files.secrets import Secrets

    for secrets in (None, Secrets({"TOKEN": "abcd1234efgh"})):
        shown: list[str] = []
        capture = Capture(secrets, 1000, shown.append)
        capture.feed(b"all of it\n")
        capture.close()  # the final, empty feed: nothing new arrived
        assert shown == ["all of it\n"], secrets
        held: list[str] = []
        capture = Capture(secrets, 1000, held.append)
        capture.feed(b"x")
        capture.feed(b"y abcd1234")  # within PROGRESS_EVERY: held back until the end
        capture.close()
        assert held[0] == "x" and held[-1].startswith("xy ") and "abcd1234" not in held[-1] * bool(secrets)
        assert len(held) == 2


def test_output_is_captured_when_the_process_holds_over_a_thousand_files() -> None:
    # a long kernel (or test run) can hold many files: the pipe then gets a number past select()'s FD_SETSIZE
    from a0nb.engine.capture import capture_output

    held: list[int] = []
    try:
        while not held or held[-1] < 1100:
            held.extend(os.pipe())
        with capture_output(None, 10_000) as out:
            print("past the limit")
            os.write(1, b"and at the fd level\n")
        assert out.text() == "past the limit\nand at the fd level\n"
    finally:
        for fd in held:
            os.close(fd)


# ---------------------------------------------------------------- a flood, in its own process

FLOOD = """
import json, sys
from pathlib import Path
from a0nb import Agent
from a0nb.testing import answer, tool_reply
code = ("import os\\nblock = b'x' * (1 << 20) + b'\\\\n'\\nfor _ in range({mb}):\\n    os.write(1, block)\\n"
        "line = 'y' * 1023\\nfor _ in range({mb} // 4 * 1024):\\n    print(line)")
agent = Agent(Path(sys.argv[1]), model=[tool_reply("code_execution", runtime="python", code=code, timeout=900),
                                        answer("ok")])
result = agent.ask("flood").calls[0].tool_result
print(json.dumps({{"length": len(result), "tail": result[-60:]}}))
"""


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the process memory from /proc")
def test_gigabytes_of_output_keep_memory_bounded(tmp_path: Path) -> None:
    ceiling_mb, mb = 400, 2048  # 2 GiB through fd 1, then 0.5 GiB of print()
    nb = tmp_path / "nb"
    nb.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("A0NB_")}
    env.update(PYTHONPATH=str(ROOT), A0NB_HOME=str(tmp_path / "home"), A0NB_APPROVAL="auto", A0NB_TRUST=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-c", FLOOD.format(mb=mb), str(nb)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=nb)
    peak = [0.0]

    def watch() -> None:  # and stop a run that goes past the ceiling before it takes the machine down
        while proc.poll() is None:
            try:
                peak[0] = max(peak[0], _rss_mb(proc.pid))
            except OSError:
                return
            if peak[0] > 3 * ceiling_mb:
                proc.kill()
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        out, err = proc.communicate(timeout=900)
    finally:
        proc.kill()
    watcher.join()
    print(f"\nflood: {mb * 1.25 / 1024:.1f} GiB of output, peak RSS {peak[0]:.0f} MB (ceiling {ceiling_mb} MB)")
    assert peak[0] < ceiling_mb, f"peak RSS {peak[0]:.0f} MB"
    assert proc.returncode == 0, err.decode(errors="replace")[-2000:]
    report: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    assert report["tail"].rstrip().endswith("y" * 40)


# ---------------------------------------------------------------- a real kernel and the saved notebook

KERNEL_CODE = """\
import os, subprocess, sys, threading, time
from IPython.display import display
key = os.environ['OPENAI_API_KEY']
os.system('echo system $OPENAI_API_KEY')
subprocess.run(['echo', 'child', key])
sys.__stdout__.write('dunder ' + key + '\\n'); sys.__stdout__.flush()
sys.__stderr__.write('dunder-err ' + key + '\\n'); sys.__stderr__.flush()
display({'text/plain': 'display ' + key}, raw=True)
def late():
    time.sleep(0.8)
    print('late thread', key)
threading.Thread(target=late).start()
print('print', key)
"""


def test_kernel_notebook_and_log_hold_no_secret(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    import nbformat
    from nbclient import NotebookClient
    nb = tmp_path / "nb"
    nb.mkdir()
    replies = [tool_reply("code_execution", runtime="python", code=KERNEL_CODE), answer("done")]
    (nb / "replies.yaml").write_text(yaml.safe_dump(replies, allow_unicode=True), encoding="utf-8")
    cells = ["%load_ext a0nb", "%a0 model scripted:replies.yaml", "%a0 ask run the code",
             "import time; time.sleep(2); print('after the turn')"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    env = {k: v for k, v in os.environ.items() if not k.startswith("A0NB_")}
    env.update(PYTHONPATH=str(ROOT), A0NB_HOME=str(tmp_path / "home"), A0NB_APPROVAL="auto", OPENAI_API_KEY=KEY,
               A0NB_TRUST=str(tmp_path),
               A0NB_FROZEN_TIME="2026-01-31T09:30:00", LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_OFFLINE_MODE="true")
    client = NotebookClient(notebook, timeout=90, kernel_name="python3", store_widget_state=False,
                            resources={"metadata": {"path": str(nb)}})
    client.execute(env=env)
    nbformat.write(notebook, nb / "saved.ipynb")
    saved = (nb / "saved.ipynb").read_text(encoding="utf-8")
    log = "".join(capfd.readouterr())  # the kernel process's own stdout and stderr
    assert KEY not in saved, "the saved notebook holds the key"
    assert KEY not in log, "the kernel log holds the key"
    assert "after the turn" in saved and "late thread <redacted:OPENAI_API_KEY>" in saved  # the outputs did arrive
    assert "system &lt;redacted:OPENAI_API_KEY&gt;" in saved and "display <redacted:OPENAI_API_KEY>" in saved
