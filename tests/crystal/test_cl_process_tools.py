"""Out-of-process tools: a bash tool (`tools/*.sh`) and a node tool (`tools/*.js`) declared by a comment header,
called with JSON on stdin, under the code tool's limits (timeout with process-group kill, output cap, secret
masking); node missing or a bad header is a diagnostic, never a crash."""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from a0nb import Agent
from a0nb.testing import answer

WORDS = """#!/usr/bin/env bash
# description: Count the words of a text.
# arg text: string, required - the text to count
payload=$(cat)
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(json.dumps({"success": True, "result": str(len(d["arguments"]["text"].split())) + " words"}))' "$payload"
"""

NODE = """// description: Reverse a string.
// arg text: string, required - what to reverse
let data = "";
process.stdin.on("data", c => data += c);
process.stdin.on("end", () => {
  const call = JSON.parse(data);
  console.log(JSON.stringify({success: true, result: call.arguments.text.split("").reverse().join("")}));
});
"""


def _call(name: str, **args: Any) -> str:
    return json.dumps({"thoughts": ["t"], "headline": "h", "tool_name": name, "tool_args": args})


def _tool(nb: Path, name: str, text: str) -> Path:
    (nb / "tools").mkdir(exist_ok=True)
    path = nb / "tools" / name
    path.write_text(text)
    return path


def test_a_bash_tool_is_declared_by_its_header_and_called_with_json(nb: Path) -> None:
    _tool(nb, "word_count.sh", WORDS)
    agent = Agent(nb, model=[_call("word_count", text="one two three"), answer("done")])
    turn = agent.ask("count")
    assert turn.calls[0].tool_result == "3 words"
    info = agent.tools.available()["word_count"]
    assert info.kind == "process" and info.description == "Count the words of a text."
    assert info.schema["required"] == ["text"]
    assert "### word_count" in turn.calls[0].messages[0]["content"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_node_tool_runs_with_node(nb: Path) -> None:
    _tool(nb, "reverse.js", NODE)
    agent = Agent(nb, model=[_call("reverse", text="abc"), answer("done")])
    assert agent.ask("reverse").calls[0].tool_result == "cba"


def test_without_node_a_js_tool_is_skipped_with_a_diagnostic(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tool(nb, "reverse.js", NODE)
    monkeypatch.setenv("PATH", "/nonexistent")
    agent = Agent(nb, model=[answer("ok")])
    assert "reverse" not in agent.tools.available()
    [diag] = [d for d in agent.diagnostics.of("tool") if d.path and d.path.endswith("reverse.js")]
    assert "`node` is not on PATH" in diag.message


def test_plain_text_output_exit_codes_and_stderr(nb: Path) -> None:
    _tool(nb, "fails.sh", "# description: Always fails.\necho partial\necho 'bad thing' >&2\nexit 3\n")
    agent = Agent(nb, model=[_call("fails"), answer("done")])
    result = agent.ask("x").calls[0].tool_result or ""
    assert "partial" in result and "bad thing" in result and "[exit code 3]" in result


def test_a_tool_that_hangs_is_stopped_and_its_process_group_killed(nb: Path, tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    _tool(nb, "hang.sh", f"# description: Hangs.\nsleep 30 &\necho $! > {marker}\nwait\n")
    agent = Agent(nb, model=[_call("hang"), answer("done")], settings={"code_timeout": 1})
    started = time.monotonic()
    turn = agent.ask("x")
    assert time.monotonic() - started < 10
    assert "stopped: the tool ran longer than 1 s" in (turn.calls[0].tool_result or "")
    pid = int(marker.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:  # a foreign process: nothing to await, so poll briefly
        time.sleep(0.05)
    assert not _alive(pid)  # the background child died with its group


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status  # a zombie is dead, only not yet reaped by its new parent


def test_output_is_capped_and_secrets_are_masked(nb: Path) -> None:
    (nb / ".a0proj").mkdir()
    (nb / ".a0proj" / "secrets.env").write_text("API_TOKEN=s3cr3t-value-123\n")
    _tool(nb, "leak.sh", "# description: Prints a lot.\necho s3cr3t-value-123\nhead -c 20000 /dev/zero | tr '\\0' x\n")
    agent = Agent(nb, model=[_call("leak"), answer("done")], settings={"output_cap": 2000})
    result = agent.ask("x").calls[0].tool_result or ""
    assert "s3cr3t-value-123" not in result
    assert len(result) < 2600


def test_a_malformed_header_is_a_diagnostic_with_the_line(nb: Path) -> None:
    _tool(nb, "bad.sh", "# description: Bad args.\n# arg : nothing\necho hi\n")
    agent = Agent(nb, model=[answer("ok")])
    assert "bad" not in agent.tools.available()
    [diag] = [d for d in agent.diagnostics.of("tool") if d.path and d.path.endswith("bad.sh")]
    assert diag.line == 2 and "malformed argument line" in diag.message
