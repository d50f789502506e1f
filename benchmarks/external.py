"""Figures measured from outside a process: peak RSS of a Jupyter kernel (VmHWM) through jupyter_client,
interrupt latency of the Agent Zero kernel, and Chromium's render time for the inspector's HTML."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


# -- kernels ---------------------------------------------------------------------------------------

def vm_hwm_kb(pid: int) -> int:
    """Peak resident set size of a process, from /proc (kB)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmHWM for pid {pid}")


class Kernel:
    """A plain ipykernel started by jupyter_client with a given python (a kernelspec in a temp folder)."""

    def __init__(self, python: str | Path, cwd: Path, env: Mapping[str, str], log: Path | None = None) -> None:
        from jupyter_client import KernelManager
        from jupyter_client.kernelspec import KernelSpecManager
        self._specs = tempfile.mkdtemp(prefix="a0bench-ks-")
        folder = Path(self._specs) / "bench"
        folder.mkdir()
        (folder / "kernel.json").write_text(json.dumps({
            "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "bench", "language": "python"}))
        self.km = KernelManager(kernel_name="bench", kernel_spec_manager=KernelSpecManager(kernel_dirs=[self._specs]))
        # the kernel's own chatter (TCP warnings, tracebacks) goes to the run log, not into the table
        with open(log or os.devnull, "ab") as err:
            self.km.start_kernel(env=dict(env), cwd=str(cwd), stdout=subprocess.DEVNULL, stderr=err)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=90)

    @property
    def pid(self) -> int:
        return int(self.km.provisioner.pid)  # type: ignore[union-attr]

    def run(self, code: str, timeout: float = 120) -> None:
        reply = self.kc.execute_interactive(code, timeout=timeout, allow_stdin=False, output_hook=lambda m: None)
        content = reply["content"]
        if content["status"] != "ok":
            raise RuntimeError(f"{code.splitlines()[0]!r} failed in the kernel: {content.get('ename')}: "
                               f"{content.get('evalue')}")

    def close(self) -> None:
        try:
            self.kc.stop_channels()
            self.km.shutdown_kernel(now=True)
        finally:
            shutil.rmtree(self._specs, ignore_errors=True)


def session_script(folder: Path, asks: int = 10, steps: int = 20) -> None:
    """`asks` turns of `steps` model calls each (steps-1 tool calls, then an answer): asks*steps steps."""
    sys.path.insert(0, str(REPO))
    from a0nb.testing import answer, tool_reply
    replies = []
    for a in range(asks):
        replies += [tool_reply("noop", i=i) for i in range(steps - 1)] + [answer(f"turn {a} done")]
    (folder / "session.yaml").write_text(json.dumps(replies), encoding="utf-8")


def rss_a0nb(python: str, folder: Path, env: Mapping[str, str], asks: int = 10, steps: int = 20,
             log: Path | None = None) -> dict[str, int]:
    """VmHWM (kB) of a main-venv kernel: started, after `%load_ext a0nb`, after a scripted asks*steps-step session."""
    folder.mkdir(parents=True, exist_ok=True)
    session_script(folder, asks, steps)
    k = Kernel(python, folder, env, log)
    try:
        k.run("pass")
        out = {"started": vm_hwm_kb(k.pid)}
        k.run("%load_ext a0nb")
        out["load_ext"] = vm_hwm_kb(k.pid)
        k.run("from a0nb.notebook.magics import get_magics\n_bench_agent = get_magics(get_ipython()).agent\n"
              "_bench_agent.register_tool(lambda i=0: 'ok', name='noop')")
        k.run("%a0 model scripted:session.yaml")
        for a in range(asks):
            k.run(f"%a0 ask turn {a}")
        k.run(f"assert len(_bench_agent.calls) == {asks * steps}, len(_bench_agent.calls)")
        out["session"] = vm_hwm_kb(k.pid)
        out["steps"] = asks * steps
        return out
    finally:
        k.close()


def rss_plain(python: str, folder: Path, env: Mapping[str, str], extension: str | None,
              log: Path | None = None) -> dict[str, int]:
    """VmHWM (kB) of a kernel started, and after `%load_ext extension` when one is given (peers)."""
    folder.mkdir(parents=True, exist_ok=True)
    k = Kernel(python, folder, env, log)
    try:
        k.run("pass")
        out = {"started": vm_hwm_kb(k.pid)}
        if extension:
            k.run(f"%load_ext {extension}")
            out["load_ext"] = vm_hwm_kb(k.pid)
        return out
    finally:
        k.close()


# -- interrupts ------------------------------------------------------------------------------------

def interrupts(repeats: int) -> dict[str, list[float]]:
    """bench_interrupt's two cases through its Session (an installed Agent Zero kernel): seconds from
    `interrupt_kernel()` to the execute_reply, while a tool sleeps and while a slow model streams."""
    sys.path.insert(0, str(HERE))
    import bench_interrupt as b
    with tempfile.TemporaryDirectory() as tmp:
        session = b.Session(Path(tmp))
        try:
            nb = session.nb
            marker = nb / "sleep.marker"
            code = f"import time; open({str(marker)!r}, 'w').close(); time.sleep(30)"
            (nb / "sleep.yaml").write_text(json.dumps([b.reply("code_execution", runtime="python", code=code)] * repeats))
            session.run(f"%a0 model scripted:{nb / 'sleep.yaml'}")
            tool = [session.interrupt_after("%a0 ask sleep", marker) for _ in range(repeats)]
            session.run("%a0 model slow:")
            stream = [session.interrupt_after("%a0 ask stream", nb / "streaming.marker") for _ in range(repeats)]
        finally:
            session.close()
    return {"tool": tool, "stream": stream}


# -- Chromium --------------------------------------------------------------------------------------

def chromium_path() -> str | None:
    for name in ("/usr/bin/chromium", "/usr/bin/chromium-browser", shutil.which("chromium") or ""):
        if name and Path(name).exists():
            return name
    return None


def _have_playwright() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def chromium_render(pages: Mapping[str, Path], rounds: int) -> tuple[dict[str, list[float]], str]:
    """ms to load each page to its second animation frame (so layout and a paint happened), pages interleaved.
    Playwright drives one browser when it is installed; otherwise each sample is a whole `--dump-dom` process."""
    exe = chromium_path()
    if _have_playwright():
        return _playwright(pages, rounds, exe), "playwright, one browser, load + 2 animation frames"
    if exe is None:
        raise RuntimeError("no Chromium (/usr/bin/chromium) and no Playwright")
    return _dump_dom(exe, pages, rounds), "whole `chromium --headless --dump-dom` process"


def _playwright(pages: Mapping[str, Path], rounds: int, exe: str | None) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright
    out: dict[str, list[float]] = {k: [] for k in pages}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS) if exe else p.chromium.launch()
        try:
            page = browser.new_page()
            names = list(pages)
            for r in range(rounds + 1):  # round 0 warms the browser's caches and is dropped
                for name in (names if r % 2 else names[::-1]):
                    t = time.perf_counter()
                    page.goto(pages[name].resolve().as_uri(), wait_until="load")
                    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                    if r:
                        out[name].append((time.perf_counter() - t) * 1000)
        finally:
            browser.close()
    return out


def _dump_dom(exe: str, pages: Mapping[str, Path], rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {k: [] for k in pages}
    names = list(pages)
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            with tempfile.TemporaryDirectory() as profile:
                argv: Sequence[str] = [exe, "--headless", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                                       pages[name].resolve().as_uri()]
                t = time.perf_counter()
                subprocess.run(argv, capture_output=True, timeout=120, check=True)
                out[name].append((time.perf_counter() - t) * 1000)
    return out


def env_for(base: Mapping[str, str], home: Path, extra: Mapping[str, Any] | None = None) -> dict[str, str]:
    env = dict(base)
    env.update({"A0NB_HOME": str(home / "a0home"), "IPYTHONDIR": str(home / "ipython"), "A0NB_STATIC": "1",
                "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    for k in [k for k in env if k.startswith("A0NB_") and k not in ("A0NB_HOME", "A0NB_STATIC")]:
        env.pop(k)
    # an installed package has its .pyc files (pip writes the peers'); without them every fresh process would
    # compile a0nb's ~50 modules again (~170 ms) and the load figures would measure the compiler
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # the benchmark's own folders (under `home`) are written by the benchmark: trusted, as make bench trusts the
    # checkout; a folder's code elsewhere stays untrusted
    env["A0NB_TRUST"] = str(home)
    env.update({k: str(v) for k, v in (extra or {}).items()})
    os.makedirs(home / "a0home", exist_ok=True)
    return env
