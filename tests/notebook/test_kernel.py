"""The "Agent Zero" kernel through jupyter_client, installed from its kernelspec into a temp prefix:
chat-mode cells, `%%python`, completion, inspection, live display, and interrupts (latency printed)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from a0nb.testing import answer, tool_reply

REPO = Path(__file__).resolve().parents[2]
SLOW_PROVIDER = Path(__file__).parent / "fixtures" / "slow_provider.py"


class Kernel:
    """A started Agent Zero kernel and its client, with small helpers around execute and interrupt."""

    def __init__(self, root: Path) -> None:
        from jupyter_client import KernelManager
        from jupyter_client.kernelspec import KernelSpecManager
        self.nb = root / "nb"
        (self.nb / "providers").mkdir(parents=True)
        (self.nb / "providers" / "slow.py").write_text(SLOW_PROVIDER.read_text(encoding="utf-8"), encoding="utf-8")
        self.chat_replies = self.nb / "chat.yaml"
        self.chat_replies.write_text(json.dumps([answer("hello from the chat kernel")]), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("A0NB_")}
        env.update(PYTHONPATH=str(REPO), A0NB_HOME=str(root / "home"), A0NB_APPROVAL="auto",
                   A0NB_MODEL=f"scripted:{self.chat_replies}", A0NB_FROZEN_TIME="2026-01-31T09:30:00",
                   LITELLM_LOCAL_MODEL_COST_MAP="True", JUPYTER_PLATFORM_DIRS="1")
        prefix = root / "prefix"
        subprocess.run([sys.executable, "-m", "a0nb", "kernel", "install", "--prefix", str(prefix)],
                       check=True, env=env, capture_output=True)
        ksm = KernelSpecManager(kernel_dirs=[str(prefix / "share" / "jupyter" / "kernels")])
        assert ksm.get_kernel_spec("a0nb").display_name == "Agent Zero"
        self.km = KernelManager(kernel_name="a0nb", kernel_spec_manager=ksm)
        self.km.start_kernel(env=env, cwd=str(self.nb))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def script(self, name: str, *replies: str) -> str:
        path = self.nb / name
        path.write_text(json.dumps(list(replies)), encoding="utf-8")
        return f"scripted:{path}"

    def execute(self, code: str, allow_stdin: bool = False,
                timeout: float = 30) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        msg_id = self.kc.execute(code, allow_stdin=allow_stdin)
        return self.reply(msg_id, timeout), self.outputs(msg_id, timeout)

    def reply(self, msg_id: str, timeout: float = 30) -> dict[str, Any]:
        while True:
            msg = self.kc.get_shell_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg["content"]

    def outputs(self, msg_id: str, timeout: float = 30) -> list[dict[str, Any]]:
        out = []
        while True:
            msg = self.kc.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return out
            if msg["msg_type"] in ("display_data", "update_display_data", "execute_result", "stream", "error"):
                out.append({"type": msg["msg_type"], **msg["content"]})

    def interrupt_when(self, code: str, marker: Path) -> tuple[float, dict[str, Any], list[dict[str, Any]]]:
        """Run `code`, interrupt once `marker` exists; seconds from interrupt to execute_reply."""
        marker.unlink(missing_ok=True)
        msg_id = self.kc.execute(code, allow_stdin=False)
        deadline = time.monotonic() + 20
        while not marker.exists():
            assert time.monotonic() < deadline, "the turn never reached the slow part"
            time.sleep(0.005)
        time.sleep(0.1)
        started = time.perf_counter()
        self.km.interrupt_kernel()
        content = self.reply(msg_id, timeout=10)
        elapsed = time.perf_counter() - started
        return elapsed, content, self.outputs(msg_id)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    k = Kernel(tmp_path_factory.mktemp("a0kernel"))
    try:
        yield k
    finally:
        k.close()


def texts(outputs: list[dict[str, Any]]) -> str:
    return "\n".join(o.get("data", {}).get("text/plain", "") or o.get("text", "") for o in outputs)


def history_problems(kernel: Kernel) -> str:
    _, out = kernel.execute("%%python\nfrom a0nb.magics import get_magics\n"
                            "print(get_magics(get_ipython()).agent.history.validate())")
    return texts(out).strip()


def test_chat_cell_is_a_message(kernel: Kernel) -> None:
    kernel.execute("%config A0.model = None")  # back to the kernel's A0NB_MODEL
    reply, out = kernel.execute("Say hello {please}, it's a test")
    assert reply["status"] == "ok"
    assert "hello from the chat kernel" in texts(out)
    assert all(o["type"] != "stream" or o["name"] != "stderr" for o in out)
    _, out = kernel.execute("%%python\nfrom a0nb.magics import get_magics\n"
                            "print(get_magics(get_ipython()).agent.turns[-1].message)")
    assert texts(out).strip() == "Say hello {please}, it's a test"


def test_python_cells_run_code(kernel: Kernel) -> None:
    reply, out = kernel.execute("%%python\nvalue = 20\nvalue * 2")
    assert reply["status"] == "ok"
    assert [o["data"]["text/plain"] for o in out if o["type"] == "execute_result"] == ["40"]
    reply, out = kernel.execute("%%python\n1 / 0")
    assert reply["status"] == "error" and reply["ename"] == "ZeroDivisionError"
    reply, out = kernel.execute("%who_ls")
    assert reply["status"] == "ok" and "value" in texts(out)


def test_complete_subcommands_profiles_and_names(kernel: Kernel) -> None:
    matches = kernel.kc.complete("%a0 sk", 6, reply=True, timeout=30)["content"]["matches"]
    assert matches == ["skills"]
    matches = kernel.kc.complete("%a0 profile de", 14, reply=True, timeout=30)["content"]["matches"]
    assert matches == ["default", "developer"]
    code = "please use pandas-in"  # chat mode: a plain cell completes skill names
    matches = kernel.kc.complete(code, len(code), reply=True, timeout=30)["content"]["matches"]
    assert "pandas-inspect" in matches


def test_inspect_tool_skill_and_python(kernel: Kernel) -> None:
    content = kernel.kc.inspect("code_execution", 5, reply=True, timeout=30)["content"]
    assert content["found"] and content["data"]["text/plain"].startswith("a0nb tool code_execution")
    content = kernel.kc.inspect("len", 2, reply=True, timeout=30)["content"]
    assert content["found"] and "a0nb" not in content["data"]["text/plain"]
    content = kernel.kc.inspect("nothing_by_this_name", 3, reply=True, timeout=30)["content"]
    assert not content["found"]


def test_live_display_in_a_front_end(kernel: Kernel) -> None:
    spec = kernel.script("live.yaml", tool_reply("code_execution", runtime="python", code="2 + 3"), answer("five"))
    kernel.execute(f"%a0 model {spec}")
    reply, out = kernel.execute("%a0 ask add", allow_stdin=True)
    assert reply["status"] == "ok"
    updates = [o for o in out if o["type"] == "update_display_data"]
    assert updates, "the live view is replaced by the static rendering"
    assert "five" in updates[-1]["data"]["text/plain"]


def test_interrupt_a_sleeping_tool(kernel: Kernel) -> None:
    marker = kernel.nb / "sleep.marker"
    code = f"import time; open({str(marker)!r}, 'w').close(); time.sleep(30)"
    spec = kernel.script("sleep.yaml", tool_reply("code_execution", runtime="python", code=code),
                         answer("after the interrupt"))
    kernel.execute(f"%a0 model {spec}")
    elapsed, reply, out = kernel.interrupt_when("%a0 ask sleep please", marker)
    print(f"\ninterrupt latency (tool in time.sleep): {elapsed * 1000:.1f} ms")
    assert reply["status"] == "ok"
    assert "TurnInterrupted" in texts(out)
    assert elapsed < 1.0
    reply, out = kernel.execute("%a0 ask go on")
    assert "after the interrupt" in texts(out)
    assert history_problems(kernel) == "[]"


def test_interrupt_a_slow_stream(kernel: Kernel) -> None:
    kernel.execute("%a0 model slow:")
    elapsed, reply, out = kernel.interrupt_when("%a0 ask stream slowly", kernel.nb / "streaming.marker")
    print(f"\ninterrupt latency (slow model stream): {elapsed * 1000:.1f} ms")
    assert reply["status"] == "ok"
    assert "TurnInterrupted" in texts(out)
    assert elapsed < 1.0
    spec = kernel.script("after_stream.yaml", answer("stream was stopped"))
    kernel.execute(f"%a0 model {spec}")
    reply, out = kernel.execute("%a0 ask and now?")
    assert "stream was stopped" in texts(out)
    assert history_problems(kernel) == "[]"
