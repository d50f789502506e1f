"""The "Agent Zero" kernel through jupyter_client, installed from its kernelspec into a temp prefix:
chat-mode cells, `%%python`, completion, inspection, live display, and interrupts (latency printed)."""
from __future__ import annotations

from typing import Iterator

import pytest

from a0nb.testing import answer, tool_reply
from kernel_harness import AgentZeroKernel as Kernel, texts

@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    k = Kernel(tmp_path_factory.mktemp("a0kernel"))
    try:
        yield k
    finally:
        k.close()


def history_problems(kernel: Kernel) -> str:
    return kernel.history_problems()


def test_chat_cell_is_a_message(kernel: Kernel) -> None:
    kernel.execute("%config A0.model = None")  # back to the kernel's A0NB_MODEL
    reply, out = kernel.execute("Say hello {please}, it's a test")
    assert reply["status"] == "ok"
    assert "hello from the chat kernel" in texts(out)
    assert all(o["type"] != "stream" or o["name"] != "stderr" for o in out)
    _, out = kernel.execute("%%python\nfrom a0nb.notebook.magics import get_magics\n"
                            "print(get_magics(get_ipython()).agent.turns[-1].message)")
    assert texts(out).strip() == "Say hello {please}, it's a test"


def test_chat_cells_are_announced_as_text_not_python(kernel: Kernel) -> None:
    """Front ends colour cells by the kernel's language_info: chat cells are prose, not Python."""
    kernel.kc.kernel_info()
    info = kernel.kc.get_shell_msg(timeout=30)["content"]["language_info"]
    assert info["codemirror_mode"] == "markdown" and info["mimetype"] == "text/markdown"
    assert info["name"] == "python"  # still an IPython kernel for tools that ask (nbconvert, nbval)


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
    spec = kernel.script(tool_reply("code_execution", runtime="python", code="2 + 3"), answer("five"))
    kernel.execute(f"%a0 model {spec}")
    reply, out = kernel.execute("%a0 ask add", allow_stdin=True)
    assert reply["status"] == "ok"
    updates = [o for o in out if o["type"] == "update_display_data"]
    assert updates, "the live view is replaced by the static rendering"
    assert "five" in updates[-1]["data"]["text/plain"]


def test_interrupt_a_sleeping_tool(kernel: Kernel) -> None:
    marker = kernel.nb / "sleep.marker"
    code = f"import time; open({str(marker)!r}, 'w').close(); time.sleep(30)"
    spec = kernel.script(tool_reply("code_execution", runtime="python", code=code),
                         answer("after the interrupt"))
    kernel.execute(f"%a0 model {spec}")
    elapsed, reply, out = kernel.interrupt_at("%a0 ask sleep please", marker)
    print(f"\ninterrupt latency (tool in time.sleep): {elapsed * 1000:.1f} ms")
    assert reply["status"] == "ok"
    assert "TurnInterrupted" in texts(out)
    assert elapsed < 1.0
    reply, out = kernel.execute("%a0 ask go on")
    assert "after the interrupt" in texts(out)
    assert history_problems(kernel) == "[]"


def test_interrupt_a_slow_stream(kernel: Kernel) -> None:
    kernel.execute("%a0 model slow:")
    elapsed, reply, out = kernel.interrupt_at("%a0 ask stream slowly", kernel.nb / "streaming.marker")
    print(f"\ninterrupt latency (slow model stream): {elapsed * 1000:.1f} ms")
    assert reply["status"] == "ok"
    assert "TurnInterrupted" in texts(out)
    assert elapsed < 1.0
    spec = kernel.script(answer("stream was stopped"))
    kernel.execute(f"%a0 model {spec}")
    reply, out = kernel.execute("%a0 ask and now?")
    assert "stream was stopped" in texts(out)
    assert history_problems(kernel) == "[]"
