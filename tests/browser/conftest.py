"""Shared by the browser tests: a JupyterLab server on 127.0.0.1 (stopped by its process group's PID) with its own
config, data, settings and home folders, and the checks that skip loudly when Chromium or Playwright is missing."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def _need_browser() -> None:
    problems = []
    if not Path(CHROMIUM).exists():
        problems.append("Debian chromium is not installed (make test installs it with apt-get when run as root)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        problems.append("playwright is not installed (pip install playwright)")
    if shutil.which("jupyter-lab", path=str(Path(sys.executable).parent)) is None:
        problems.append("jupyterlab is not installed in this environment")
    if problems:
        msg = "BROWSER TEST SKIPPED: " + "; ".join(problems)
        print("\n" + msg, file=sys.stderr)
        pytest.skip(msg)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def lab(tmp_path: Path):
    with running_lab(tmp_path) as server:
        yield server


@contextlib.contextmanager
def running_lab(tmp_path: Path, theme: str = ""):
    """JupyterLab serving `tmp_path/lab` (optionally in a named theme, e.g. "JupyterLab Dark")."""
    _need_browser()
    work = tmp_path / "lab"
    work.mkdir()
    home = tmp_path / "home"
    env = dict(os.environ)
    env.update({
        "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "IPYTHONDIR": str(home / "ipython"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "lab-settings"), "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HOME": str(home),
        # the test's own folder is trusted (as `make test` trusts every folder): no folder-trust prompt
        "A0NB_TRUST": os.pathsep.join(v for v in (os.environ.get("A0NB_TRUST"), str(work)) if v),
    })
    notify = home / "lab-settings" / "@jupyterlab" / "apputils-extension"
    notify.mkdir(parents=True)
    (notify / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    if theme:
        (notify / "themes.jupyterlab-settings").write_text(f'{{"theme": "{theme}"}}')
    port, token = _free_port(), "a0nb-browser-test"
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.port_retries=0",
           "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = (tmp_path / "lab.log").open("w")
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{base}/lab?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("JupyterLab did not answer within 60 s:\n" + (tmp_path / "lab.log").read_text()[-3000:])
        yield {"base": base, "token": token, "work": work, "home": home}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


