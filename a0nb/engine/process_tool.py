"""Out-of-process tools: `tools/<name>.sh` run by bash, `tools/<name>.js|.mjs` by node (when it is on PATH).
A comment header declares the tool; a call sends `{"tool_name", "arguments"}` as JSON on stdin and reads the
result from stdout (a JSON object with `success`/`result`/`error`, or plain text), under the code tool's
limits: timeout (`code_timeout`), process-group kill, output cap (`output_cap`), secret masking.

Header (`#` for bash, `//` for node), before the first code line:

    # description: Count the words of a text.
    # arg text: string, required - the text to count
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from a0nb.engine.tool import Response, Tool

RUNNERS = {".sh": "bash", ".js": "node", ".mjs": "node"}
_ARG = re.compile(r"arg\s+([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([a-z]+)\s*(,\s*required)?\s*(?:[-—]\s*(.*))?$")


@dataclass(frozen=True)
class ProcessSpec:
    path: Path
    runner: str
    description: str = ""
    schema: dict[str, Any] = field(default_factory=dict)


class HeaderError(ValueError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def read_spec(path: Path) -> ProcessSpec:
    """The tool's declaration from its comment header; HeaderError (with the line) for a malformed one."""
    runner = RUNNERS[path.suffix]
    mark = "#" if runner == "bash" else "//"
    description, props, required = "", {}, []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if number == 1 and line.startswith("#!"):
            continue
        if not line:
            continue
        if not line.startswith(mark):
            break
        text = line[len(mark):].strip()
        if text.startswith("description:"):
            description = text.split(":", 1)[1].strip()
        elif text.startswith("arg "):
            m = _ARG.match(text)
            if m is None:
                raise HeaderError(f"malformed argument line {text!r}; write `arg NAME: TYPE[, required] - help`", number)
            name, kind, req, doc = m.groups()
            props[name] = {"type": kind, **({"description": doc.strip()} if doc else {})}
            if req:
                required.append(name)
    if not description:
        raise HeaderError(f"no `{mark} description: ...` line in the header (before the first code line)", 1)
    return ProcessSpec(path, runner, description, {"type": "object", "properties": props, "required": required})


def runner_available(runner: str) -> bool:
    return shutil.which(runner) is not None


class ProcessTool(Tool):
    """Runs the file with its runner; the JSON call on stdin, the result on stdout."""

    def __init__(self, *args: Any, spec: ProcessSpec, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spec = spec

    async def execute(self, **kwargs: Any) -> Response:
        agent = self.agent
        payload = json.dumps({"tool_name": self.method or self.name, "arguments": kwargs}, ensure_ascii=False)
        limit = float(agent.settings.code_timeout)
        out, err, code = await run_process([self.spec.runner, str(self.spec.path)], payload, limit, str(agent.workdir))
        return Response(message=agent.mask(self._cap(_result_text(out, err, code, limit))))

    def _cap(self, text: str) -> str:
        cap = int(self.agent.settings.output_cap)
        if len(text) <= cap:
            return text or "(no output)"
        head, tail = text[: cap * 2 // 3], text[-cap // 3:]
        marker = self.agent.read_prompt("fw.code.truncated.md", length=len(text) - len(head) - len(tail))
        return f"{head}\n{marker}\n{tail}"


async def run_process(argv: list[str], stdin: str, timeout: float, cwd: str) -> tuple[str, str, int | None]:
    """(stdout, stderr, exit code); exit code None when it was stopped at the timeout (group killed)."""
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True)
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode("utf-8")), timeout or None)
    except (asyncio.TimeoutError, asyncio.CancelledError) as exc:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await proc.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        return "", "", None
    return out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace"), proc.returncode


def _result_text(out: str, err: str, code: int | None, limit: float) -> str:
    if code is None:
        return f"[stopped: the tool ran longer than {limit:g} s (setting code_timeout)]"
    text = out.strip()
    try:
        data = json.loads(text) if text.startswith("{") else None
    except ValueError:
        data = None
    if isinstance(data, dict) and ("success" in data or "result" in data or "error" in data):
        if data.get("success") is False or ("error" in data and "result" not in data):
            text = f"Error: {data.get('error', 'the tool reported a failure')}"
        else:
            result = data.get("result")
            text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    if code:
        text = (text + "\n" if text else "") + (err.strip() + "\n" if err.strip() else "") + f"[exit code {code}]"
    return text


__all__ = ["ProcessTool", "ProcessSpec", "read_spec", "runner_available", "run_process", "RUNNERS", "HeaderError"]
