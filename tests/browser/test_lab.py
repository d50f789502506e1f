"""A real browser: JupyterLab on 127.0.0.1 with Debian's headless Chromium driven by Playwright runs a
notebook with a scripted turn; we wait for the live widget, then for the final static rendering, check
the composition bar and an inspector tab in the DOM, and save screenshots under test-artifacts/browser/."""
from __future__ import annotations

import json
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

REPLIES = [
    json.dumps({"thoughts": ["I will compute it in Python, slowly enough to watch."], "headline": "Computing 17*23",
                "tool_name": "code_execution",
                # a shell command: the kernel's main thread stays free, so the live tabs answer meanwhile
                "tool_args": {"runtime": "terminal", "code": "sleep 6; echo $((17*23))"}}),
    json.dumps({"thoughts": ["The result is known."], "headline": "Answering", "tool_name": "response",
                "tool_args": {"text": "17 × 23 = **391**"}}),
]

CELLS = [
    "%load_ext a0nb",
    "%config A0.approval = 'auto'\n%a0 model scripted:replies.yaml",
    "%a0 ask What is 17*23?",
    "%a0 extras",
    "%a0 plugins config usage_footer",
]


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


def _notebook(folder: Path) -> Path:
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    path = folder / "browser.ipynb"
    nbformat.write(nb, path)
    (folder / "replies.yaml").write_text("\n".join("- " + json.dumps(r) for r in REPLIES) + "\n")
    return path


@pytest.fixture
def lab(tmp_path: Path):
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
    })
    notify = home / "lab-settings" / "@jupyterlab" / "apputils-extension"
    notify.mkdir(parents=True)
    (notify / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
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


def test_live_widget_then_static_rendering_in_chromium(lab: dict, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright
    _notebook(lab["work"])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            user_data_dir=str(tmp_path / "chrome"), executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1280, "height": 1100})
        try:
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            page.goto(f"{lab['base']}/lab/tree/browser.ipynb?reset&token={lab['token']}")
            page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell .jp-InputArea-editor",
                                   state="visible", timeout=90_000)
            page.locator(".jp-StatusBar-Widget", has_text="| Idle").first.wait_for(state="visible", timeout=90_000)
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
            page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
            live = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output .jupyter-widgets",
                                has_text="code_execution").first
            live.wait_for(state="visible", timeout=90_000)
            page.screenshot(path=str(ARTIFACTS / "1-live-widget.png"))
            # while the tool runs: open the live inspector's Extras tab; its contents are built on opening
            widget = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output .jupyter-widgets").first
            widget.locator(".jupyter-widget-Collapse-header, .p-Collapse-header, .lm-Collapse-header, "
                           ".widget-collapse-header", has_text="Inspector").first.click()
            widget.locator(".lm-TabBar-tab, .p-TabBar-tab", has_text="Extras").first.click()
            tab = widget.locator(".widget-html", has_text="current_datetime").first
            try:
                tab.wait_for(state="visible", timeout=30_000)
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "failed-live-tab.png"))
                raise
            assert "_60_include_current_datetime" in tab.inner_text()
            page.screenshot(path=str(ARTIFACTS / "2-live-inspector-extras-tab.png"))
            final = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output",
                                 has_text="Model calls").first
            final.wait_for(state="visible", timeout=90_000)
            page.wait_for_function("() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) "
                                   ".jp-Cell .jp-InputArea-prompt')].every(e => /\\[\\d+\\]/.test(e.textContent))",
                                   timeout=90_000)
            output = final.inner_html()
            assert "391" in final.inner_text()
            assert "tokens" in output and "width:" in output  # the composition bar's segments
            bar_titles = page.eval_on_selector_all(
                ".jp-OutputArea-output div[title*='tokens']", "els => els.map(e => e.title)")
            assert any(t.startswith("system: main prompt") for t in bar_titles), bar_titles
            assert page.locator(".jp-OutputArea-output .jupyter-widgets", has_text="code_execution").count() == 0
            final.scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / "3-static-rendering.png"), full_page=False)
            # the bundled usage_footer plugin's message_footer and status_bar lines under the answer
            footer = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .a0-footer").first
            footer.wait_for(state="visible", timeout=30_000)
            assert "tokens" in footer.inner_text() and "scripted:replies.yaml" in footer.inner_text()
            status = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .a0-ui .a0-status").first
            assert "context" in status.inner_text() and "idle" in status.inner_text()
            footer.scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / "5-footer-and-status.png"))
            # an inspector tab: open the Extras view through the magic and check its contents in the DOM
            # the static Extras view of the fourth cell (key → value → the hook that set it)
            cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")
            extras = cells.nth(3).locator(".jp-OutputArea-output", has_text="current_datetime").first
            extras.wait_for(state="visible", timeout=60_000)
            assert "_60_include_current_datetime" in extras.inner_text()
            extras.scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / "4-extras-view.png"))
            # the usage_footer plugin's `config` element as a live form: pick fields, Save writes config.json
            form = cells.last.locator(".jupyter-widgets", has_text="usage_footer").first
            form.wait_for(state="visible", timeout=60_000)
            form.locator("select").first.select_option(["tokens", "model"])
            form.locator("button", has_text="Save").click()
            saved = form.locator(".widget-html", has_text="saved to").first
            saved.wait_for(state="visible", timeout=30_000)
            config = json.loads((lab["work"] / ".a0proj" / "plugins" / "usage_footer" / "config.json").read_text())
            assert config["footer"] == ["tokens", "model"], config
            form.scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / "6-plugin-config-form.png"))
        finally:
            ctx.close()
