"""The `code_execution` tool: Python in the namespace the host supplies (in a kernel, the
notebook's own variables) or a shell command in a subprocess; timeout, output cap. Approval is not
decided here: the loop asks before this tool runs (a0nb.engine.approval), whatever file provides it."""
from __future__ import annotations

import ast
import asyncio
import contextlib
import os
import signal
import traceback

from a0nb.ext import Capture, CodeTimeout, Response, Tool, capture_output, time_limit

GRACE = 0.3  # seconds to wait, after the command ended, for a background process to let go of the output

RUNTIMES = ("python", "terminal")


class CodeExecution(Tool):
    description = "Run Python in the notebook namespace, or a shell command."
    parameters = {"type": "object", "required": ["runtime", "code"], "properties": {
        "runtime": {"type": "string", "enum": list(RUNTIMES), "description": "python (the notebook's namespace) or terminal"},
        "code": {"type": "string", "description": "the code or shell command to run"},
        "timeout": {"type": "number", "description": "seconds before the run is stopped"}}}

    async def execute(self, runtime="python", code="", timeout=None, **kwargs):
        agent = self.agent
        runtime = str(self.method or runtime or "python").strip().lower()
        runtime = {"shell": "terminal", "bash": "terminal", "sh": "terminal", "py": "python"}.get(runtime, runtime)
        if runtime not in RUNTIMES:
            return Response(message=f"code_execution: unknown runtime {runtime!r}; use \"python\" or \"terminal\".")
        if not str(code).strip():
            return Response(message="code_execution needs non-empty `code`.")
        settings = agent.settings
        # the loop's tool_timeout cannot stop code on the main thread, so the code's own limit honours it too
        limits = [float(x) for x in (timeout or settings.code_timeout, settings.tool_timeout) if x]
        limit = min(limits) if limits else None
        loop = asyncio.get_running_loop()
        report = lambda text: loop.call_soon_threadsafe(self.set_progress, text)  # the live view, from the reader
        args = (agent.secrets, int(settings.output_limit), report)
        if runtime == "python":
            output = await agent.run_on_main(in_folder, str(agent.workdir), run_python, agent.namespace, str(code),
                                             limit, args)
        else:
            output = await run_terminal(str(code), limit, str(agent.workdir), args)
        return Response(message=agent.mask(self._cap(output)))

    def _cap(self, text):
        cap = self.agent.settings.output_cap
        if len(text) <= cap:
            return text or "(no output)"
        head, tail = text[: cap * 2 // 3], text[-cap // 3:]
        marker = self.agent.read_prompt("fw.code.truncated.md", length=len(text) - len(head) - len(tail))
        return f"{head}\n{marker}\n{tail}"


def in_folder(folder, fn, *args):
    """`fn(*args)` with the working directory set to the agent's folder (as the terminal runtime has it), so
    relative paths in the agent's Python mean the same files as in its shell commands; restored after."""
    previous = os.getcwd()
    if os.path.realpath(previous) == os.path.realpath(folder):
        return fn(*args)
    os.chdir(folder)
    try:
        return fn(*args)
    finally:
        os.chdir(previous)


def run_python(namespace, code, timeout, capture=(None, 1_000_000, None)):
    """Run `code` in `namespace`; its output (printed, fd-level, child processes), masked and bounded,
    with the last expression's value, or the error."""
    try:
        tree = ast.parse(code, "<code_execution>", "exec")
    except SyntaxError as exc:
        return "".join(traceback.format_exception_only(type(exc), exc))
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    namespace.setdefault("__builtins__", __builtins__)
    with capture_output(*capture) as out:
        try:
            with time_limit(timeout):
                exec(compile(tree, "<code_execution>", "exec"), namespace)
                if last is not None:
                    value = eval(compile(ast.Expression(last.value), "<code_execution>", "eval"), namespace)
                    if value is not None:
                        print(repr(value))
        except CodeTimeout:
            print(f"[stopped: the code ran longer than {timeout:g} s]")
        except SystemExit as exc:  # like a notebook cell: reported, the kernel (and the agent's loop) go on
            print(f"SystemExit: {exc}")
        except Exception as exc:
            frames = traceback.extract_tb(exc.__traceback__)
            user = [f for f in frames if f.filename == "<code_execution>"] or frames[-1:]
            lines = traceback.format_list(user) + traceback.format_exception_only(type(exc), exc)
            print("Traceback (most recent call last):\n" + "".join(lines), end="")
    return out.text() + _still_running(out)


def _still_running(out):
    return ("\n[a background process still holds the output; what it writes later is not part of this result]"
            if out.still_running else "")


async def run_terminal(command, timeout, cwd, capture=(None, 1_000_000, None)):
    """The command's output, masked and bounded as it arrives; a detached daemon holding the output does
    not block the result, and at the time limit what was printed so far is kept."""
    out = Capture(*capture)
    proc = await asyncio.create_subprocess_shell(
        command, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        stdin=asyncio.subprocess.DEVNULL, start_new_session=True)

    async def pump():
        while True:
            try:
                data = await asyncio.wait_for(proc.stdout.read(1 << 16), 0.1)
            except asyncio.TimeoutError:
                out.tick()  # a quiet moment: what arrived last reaches the live view now
                continue
            if not data:
                break
            out.feed(data)
        out.close()

    reader = asyncio.ensure_future(pump())
    note = ""
    try:
        await asyncio.wait_for(_exited(proc), timeout)
    except (asyncio.TimeoutError, asyncio.CancelledError) as exc:
        _kill(proc)
        if isinstance(exc, asyncio.CancelledError):
            reader.cancel()
            raise
        note = f"\n[stopped: the command ran longer than {timeout:g} s]"
    try:
        await asyncio.wait_for(asyncio.shield(reader), GRACE)
    except asyncio.TimeoutError:  # a daemon holds the pipe: it is drained in the background, bounded
        out.still_running = True
    code = proc.returncode
    exit_note = f"\n[exit code {code}]" if code and not note else ""
    return out.text() + note + exit_note + _still_running(out)


async def _exited(proc):
    """The shell's own exit (asyncio's `wait()` also waits for every holder of the pipe: a daemon)."""
    while proc.returncode is None:
        await asyncio.sleep(0.05)


def _kill(proc):
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
