"""The `code_execution` tool: Python in the namespace the host supplies (in a kernel, the
notebook's own variables) or a shell command in a subprocess; timeout, output cap, approval."""
from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import os
import signal
import threading
import traceback

from a0nb.ext import Response, Tool

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
        if not await self._approved(runtime, str(code)):
            return Response(message=agent.read_prompt("fw.code.denied.md", runtime=runtime, policy=agent.settings.approval))
        limit = float(timeout or agent.settings.code_timeout)
        if runtime == "python":
            output = await agent.run_on_main(run_python, agent.namespace, str(code), limit)
        else:
            output = await run_terminal(str(code), limit, str(agent.workdir))
        return Response(message=self._cap(output))

    async def _approved(self, runtime, code):
        policy = self.agent.settings.approval
        if policy == "auto":
            return True
        if policy == "deny":
            return False
        approver = self.agent.shared.approver or ask_on_stdin
        # the user approves the code as the model wrote it: aliases, never the resolved secret values
        return bool(await self.agent.run_on_main(approver, runtime, self.agent.mask(code)))

    def _cap(self, text):
        cap = self.agent.settings.output_cap
        if len(text) <= cap:
            return text or "(no output)"
        head, tail = text[: cap * 2 // 3], text[-cap // 3:]
        marker = self.agent.read_prompt("fw.code.truncated.md", length=len(text) - len(head) - len(tail))
        return f"{head}\n{marker}\n{tail}"


def ask_on_stdin(runtime, code):
    """The default approver for policy `ask`: a y/N prompt (an input box in a notebook front end)."""
    try:
        answer = input(f"a0nb: run this {runtime} code?\n{code}\n[y/N] ")
    except (EOFError, RuntimeError):  # no stdin: a headless run refuses
        return False
    return answer.strip().lower() in ("y", "yes")


class _Timeout(Exception):
    pass


def run_python(namespace, code, timeout):
    """Run `code` in `namespace`; stdout, stderr and the last expression's value, or the error."""
    out = io.StringIO()
    try:
        tree = ast.parse(code, "<code_execution>", "exec")
    except SyntaxError as exc:
        return "".join(traceback.format_exception_only(type(exc), exc))
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    namespace.setdefault("__builtins__", __builtins__)
    with _alarm(timeout), contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            exec(compile(tree, "<code_execution>", "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<code_execution>", "eval"), namespace)
                if value is not None:
                    print(repr(value))
        except _Timeout:
            print(f"[stopped: the code ran longer than {timeout:g} s]")
        except SystemExit as exc:  # like a notebook cell: reported, the kernel (and the agent's loop) go on
            print(f"SystemExit: {exc}")
        except Exception as exc:
            frames = traceback.extract_tb(exc.__traceback__)
            user = [f for f in frames if f.filename == "<code_execution>"] or frames[-1:]
            lines = traceback.format_list(user) + traceback.format_exception_only(type(exc), exc)
            print("Traceback (most recent call last):\n" + "".join(lines), end="")
    return out.getvalue()


@contextlib.contextmanager
def _alarm(timeout):
    """A SIGALRM timeout when on the main thread (the kernel's); elsewhere no preemption is possible."""
    if not (timeout and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()):
        yield
        return

    def on_alarm(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


async def run_terminal(command, timeout, cwd):
    proc = await asyncio.create_subprocess_shell(
        command, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        stdin=asyncio.subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except (asyncio.TimeoutError, asyncio.CancelledError) as exc:
        _kill(proc)
        if isinstance(exc, asyncio.CancelledError):
            raise
        return f"[stopped: the command ran longer than {timeout:g} s]"
    text = out.decode("utf-8", errors="replace")
    return text + (f"\n[exit code {proc.returncode}]" if proc.returncode else "")


def _kill(proc):
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
