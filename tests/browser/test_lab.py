"""A real browser: JupyterLab on 127.0.0.1 with Debian's headless Chromium driven by Playwright runs a
notebook with a scripted turn; we wait for the live widget, then for the final static rendering, check
the composition bar and an inspector tab in the DOM, and save screenshots under test-artifacts/browser/."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import ARTIFACTS, CHROMIUM, FLAGS  # type: ignore[import-not-found]

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


def _notebook(folder: Path) -> Path:
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    path = folder / "browser.ipynb"
    nbformat.write(nb, path)
    (folder / "replies.yaml").write_text("\n".join("- " + json.dumps(r) for r in REPLIES) + "\n")
    return path


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
