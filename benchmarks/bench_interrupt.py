"""Interrupt latency of the Agent Zero kernel: time from `km.interrupt_kernel()` to the execute_reply
of the interrupted `%a0 ask`, (a) while a tool runs `time.sleep(30)`, (b) during a slow model stream.

Run: .venv/bin/python benchmarks/bench_interrupt.py [repeats]   (default 20 per case; exits 0)."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SLOW_PROVIDER = REPO / "tests" / "notebook" / "fixtures" / "slow_provider.py"


def reply(tool: str, **args: object) -> str:
    return json.dumps({"thoughts": ["t"], "headline": f"use {tool}", "tool_name": tool, "tool_args": args})


class Session:
    """One Agent Zero kernel (installed into a temp prefix) in a notebook folder."""

    def __init__(self, root: Path) -> None:
        from jupyter_client import KernelManager
        from jupyter_client.kernelspec import KernelSpecManager
        self.nb = root / "nb"
        (self.nb / "providers").mkdir(parents=True)
        (self.nb / "providers" / "slow.py").write_text(SLOW_PROVIDER.read_text(encoding="utf-8"))
        env = dict(os.environ, PYTHONPATH=str(REPO), A0NB_HOME=str(root / "home"), A0NB_APPROVAL="auto",
                   A0NB_STATIC="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
        subprocess.run([sys.executable, "-m", "a0nb", "kernel", "install", "--prefix", str(root / "prefix")],
                       check=True, env=env, capture_output=True)
        ksm = KernelSpecManager(kernel_dirs=[str(root / "prefix" / "share" / "jupyter" / "kernels")])
        self.km = KernelManager(kernel_name="a0nb", kernel_spec_manager=ksm)
        self.km.start_kernel(env=env, cwd=str(self.nb))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: float = 30) -> dict:
        return self.kc.execute_interactive(code, timeout=timeout, allow_stdin=False, output_hook=lambda m: None)

    def interrupt_after(self, code: str, marker: Path) -> float:
        marker.unlink(missing_ok=True)
        msg_id = self.kc.execute(code, allow_stdin=False)
        deadline = time.monotonic() + 20
        while not marker.exists():
            if time.monotonic() > deadline:
                raise RuntimeError("the turn never reached the slow part")
            time.sleep(0.005)
        time.sleep(0.1)
        started = time.perf_counter()
        self.km.interrupt_kernel()
        while True:
            msg = self.kc.get_shell_msg(timeout=10)
            if msg["parent_header"].get("msg_id") == msg_id:
                elapsed = time.perf_counter() - started
                break
        self._drain(msg_id)
        return elapsed

    def _drain(self, msg_id: str) -> None:
        while True:
            msg = self.kc.get_iopub_msg(timeout=10)
            if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status"
                    and msg["content"]["execution_state"] == "idle"):
                return

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def summary(name: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return (f"{name:<28} n={len(ms):<3} median {statistics.median(ms):7.1f} ms   min {min(ms):7.1f} ms   "
            f"max {max(ms):7.1f} ms")


def main(repeats: int = 20) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        session = Session(Path(tmp))
        try:
            nb = session.nb
            sleep_marker = nb / "sleep.marker"
            code = f"import time; open({str(sleep_marker)!r}, 'w').close(); time.sleep(30)"
            (nb / "sleep.yaml").write_text(json.dumps([reply("code_execution", runtime="python", code=code)] * repeats))
            session.run(f"%a0 model scripted:{nb / 'sleep.yaml'}")
            sleeping = [session.interrupt_after("%a0 ask sleep", sleep_marker) for _ in range(repeats)]
            session.run("%a0 model slow:")
            streaming = [session.interrupt_after("%a0 ask stream", nb / "streaming.marker") for _ in range(repeats)]
            check = session.run("%%python\nfrom a0nb.notebook.magics import get_magics\n"
                                "assert get_magics(get_ipython()).agent.history.validate() == []")
        finally:
            session.close()
    print(summary("interrupt, tool sleeping", sleeping))
    print(summary("interrupt, slow stream", streaming))
    print(f"history consistent after {2 * repeats} interrupts: {check['content']['status'] == 'ok'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
