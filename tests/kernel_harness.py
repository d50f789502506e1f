"""One harness for tests that drive the "Agent Zero" kernel through jupyter_client: the kernelspec is
installed into a temp prefix, the kernel runs in a temp notebook folder, and interrupts are timed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Mapping

from a0nb.testing import answer

REPO = Path(__file__).resolve().parents[1]
SLOW_PROVIDER = REPO / "tests" / "notebook" / "fixtures" / "slow_provider.py"
Outputs = list[dict[str, Any]]


class AgentZeroKernel:
    """A started kernel and its client; `providers` are extra provider files for the notebook folder."""

    def __init__(self, root: Path, providers: Mapping[str, str] = {}, greeting: str = "hello from the chat kernel") -> None:
        from jupyter_client import KernelManager
        from jupyter_client.kernelspec import KernelSpecManager
        self.nb = root / "nb"
        folder = self.nb / "providers"
        folder.mkdir(parents=True)
        (folder / "slow.py").write_text(SLOW_PROVIDER.read_text(encoding="utf-8"), encoding="utf-8")
        for name, text in providers.items():
            (folder / name).write_text(text, encoding="utf-8")
        self.scripts = 0
        env = {k: v for k, v in os.environ.items() if not k.startswith("A0NB_")}
        env.update(PYTHONPATH=str(REPO), A0NB_HOME=str(root / "home"), A0NB_APPROVAL="auto", A0NB_TRUST=str(root),
                   A0NB_MODEL=self.script(answer(greeting), name="chat.yaml"),
                   A0NB_FROZEN_TIME="2026-01-31T09:30:00", LITELLM_LOCAL_MODEL_COST_MAP="True",
                   JUPYTER_PLATFORM_DIRS="1")
        prefix = root / "prefix"
        subprocess.run([sys.executable, "-m", "a0nb", "kernel", "install", "--prefix", str(prefix)],
                       check=True, env=env, capture_output=True)
        self.ksm = KernelSpecManager(kernel_dirs=[str(prefix / "share" / "jupyter" / "kernels")])
        self.km = KernelManager(kernel_name="a0nb", kernel_spec_manager=self.ksm)
        self.km.start_kernel(env=env, cwd=str(self.nb))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def script(self, *replies: str, name: str | None = None) -> str:
        """A scripted-model spec for `replies` (a fresh file per call: a new spec starts at its first reply)."""
        self.scripts += 1
        path = self.nb / (name or f"script{self.scripts}.yaml")
        path.write_text(json.dumps(list(replies)), encoding="utf-8")
        return f"scripted:{path}"

    def execute(self, code: str, allow_stdin: bool = False, timeout: float = 30) -> tuple[dict[str, Any], Outputs]:
        msg_id = self.kc.execute(code, allow_stdin=allow_stdin)
        return self.reply(msg_id, timeout), self.outputs(msg_id, timeout)

    def reply(self, msg_id: str, timeout: float = 30) -> dict[str, Any]:
        while True:
            msg = self.kc.get_shell_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg["content"]

    def outputs(self, msg_id: str, timeout: float = 30) -> Outputs:
        out = []
        while True:
            msg = self.kc.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return out
            if msg["msg_type"] in ("display_data", "update_display_data", "execute_result", "stream", "error"):
                out.append({"type": msg["msg_type"], **msg["content"]})

    def interrupt_at(self, code: str, marker: Path, delay: float = 0.1) -> tuple[float, dict[str, Any], Outputs]:
        """Run `code`, interrupt `delay` s after `marker` appears; seconds from interrupt to execute_reply."""
        marker.unlink(missing_ok=True)
        msg_id = self.kc.execute(code, allow_stdin=False)
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert time.monotonic() < deadline, f"the turn never reached {marker.name}"
            time.sleep(0.005)
        time.sleep(delay)
        started = time.perf_counter()
        self.km.interrupt_kernel()
        content = self.reply(msg_id, timeout=15)
        elapsed = time.perf_counter() - started
        return elapsed, content, self.outputs(msg_id)

    def history_problems(self) -> str:
        _, out = self.execute("%%python\nfrom a0nb.notebook.magics import get_magics\n"
                              "print(get_magics(get_ipython()).agent.history.validate())")
        return texts(out).strip()

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def texts(outputs: Outputs) -> str:
    """The text of outputs: text/plain data, streams, and tracebacks of errors."""
    return "\n".join(o.get("data", {}).get("text/plain", "") or o.get("text", "") or " ".join(o.get("traceback", []))
                     for o in outputs)
