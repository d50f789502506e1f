"""The `a0nb` command line, run as a subprocess: kernel install into a temp prefix, prompt (text and
--sources), doctor (key variables shown as set/unset, never their values), run on a tiny notebook, demo."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from a0nb.testing import answer

REPO = Path(__file__).resolve().parents[1]


def a0nb(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
         timeout: float = 120) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "JUPYTER_PLATFORM_DIRS": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "a0nb", *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=timeout)


def test_no_command_prints_help() -> None:
    out = a0nb()
    assert out.returncode == 2
    assert "kernel" in out.stdout and "doctor" in out.stdout


def test_kernel_install_into_a_prefix(tmp_path: Path) -> None:
    out = a0nb("kernel", "install", "--prefix", str(tmp_path / "p"))
    assert out.returncode == 0, out.stderr
    spec_dir = tmp_path / "p" / "share" / "jupyter" / "kernels" / "a0nb"
    assert str(spec_dir) in out.stdout
    spec = json.loads((spec_dir / "kernel.json").read_text())
    assert spec["display_name"] == "Agent Zero" and spec["language"] == "python"
    assert spec["argv"] == [sys.executable, "-m", "a0nb.notebook.kernel", "-f", "{connection_file}"]
    for logo in ("logo-32x32.png", "logo-64x64.png"):
        assert (spec_dir / logo).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    # the shipped kernelspec keeps the portable "python"
    shipped = json.loads((REPO / "kernel" / "a0nb" / "kernel.json").read_text())
    assert shipped["argv"][0] == "python"


def test_kernel_install_options_are_exclusive(tmp_path: Path) -> None:
    out = a0nb("kernel", "install", "--user", "--prefix", str(tmp_path))
    assert out.returncode == 2 and "not allowed" in out.stderr


def test_prompt_text_and_sources(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "agent.system.main.role.md").write_text("You are the notebook's own role.\n")
    out = a0nb("prompt", "--workdir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "You are the notebook's own role." in out.stdout
    out = a0nb("prompt", "--workdir", str(tmp_path), "--sources")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    role = next(i for i, line in enumerate(lines) if line.startswith("agent.system.main.role.md"))
    assert "[notebook]" in lines[role] and str(tmp_path / "prompts") in lines[role]
    assert lines[role + 1].strip().startswith("overrides ") and "agent.system.main.role.md" in lines[role + 1]
    assert any(line.startswith("agent.system.main.md") and "[bundled]" in line for line in lines)


def test_prompt_says_which_placeholders_the_code_fills(tmp_path: Path) -> None:
    out = a0nb("prompt", "--workdir", str(tmp_path), "--file", "agent.system.tools.md")
    assert out.returncode == 0 and "{{tools}}" in out.stdout  # (the file's own text on stdout)
    assert "{{tools}} left as written" in out.stderr and "%a0 inspect" in out.stderr
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "plain.md").write_text("Nothing to fill.\n")
    out = a0nb("prompt", "--workdir", str(tmp_path), "--file", "plain.md")
    assert out.returncode == 0 and out.stdout.strip() == "Nothing to fill." and out.stderr == ""


def test_prompt_other_file_and_profile(tmp_path: Path) -> None:
    out = a0nb("prompt", "--workdir", str(tmp_path), "--profile", "developer", "--file", "fw.warning.md")
    assert out.returncode == 0, out.stderr
    out = a0nb("prompt", "--workdir", str(tmp_path / "missing"))
    assert out.returncode == 2 and "not a folder" in out.stderr


def test_doctor_shows_which_keys_are_set_never_values(tmp_path: Path) -> None:
    secret = "sk-test-DO-NOT-PRINT-1234567890"
    env = {"OPENAI_API_KEY": secret, "A0NB_HOME": str(tmp_path / "home")}
    env_clean = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    full = {**env_clean, "PYTHONPATH": str(REPO), "JUPYTER_PLATFORM_DIRS": "1", **env}
    out = subprocess.run([sys.executable, "-m", "a0nb", "doctor"], cwd=tmp_path, env=full, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "✓ OPENAI_API_KEY" in out.stdout
    assert "✗ ANTHROPIC_API_KEY" in out.stdout
    assert secret not in out.stdout + out.stderr
    for name in ("python", "a0nb", "ipython", "ipykernel", "litellm"):
        assert any(line.startswith(name) for line in out.stdout.splitlines()), name
    assert "search hierarchy for" in out.stdout and "notebook" in out.stdout
    assert "diagnostics:" in out.stdout
    assert "litellm" not in out.stderr  # versions come from metadata: litellm is never imported


def test_run_executes_a_notebook_headless(tmp_path: Path) -> None:
    import nbformat
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "replies.yaml").write_text(json.dumps([answer("answer from the headless run")]))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext a0nb"),
                nbformat.v4.new_code_cell("%a0 ask hello from nbclient"),
                nbformat.v4.new_code_cell("import os; print(os.getcwd())"),
                nbformat.v4.new_code_cell("from ipykernel.kernelapp import IPKernelApp\n"
                                          "print(IPKernelApp.instance().transport)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "tiny.ipynb"
    nbformat.write(nb, path)
    socket_dirs = lambda: {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("a0nb-kernel-")}  # noqa: E731
    before = socket_dirs()
    out = a0nb("run", str(path), "--model", "scripted:replies.yaml", "--output", str(tmp_path / "out.ipynb"),
               env={"A0NB_HOME": str(tmp_path / "home")})
    assert out.returncode == 0, out.stderr
    executed = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    answer_outputs = executed.cells[1].outputs
    assert "answer from the headless run" in answer_outputs[0]["data"]["text/plain"]
    assert answer_outputs[0]["metadata"]["a0"]["model"] == "scripted:replies.yaml"
    assert executed.cells[2].outputs[0]["text"].strip() == str(folder)
    # the kernel talked over Unix sockets in a private folder, not TCP ports any local user can reach
    assert executed.cells[3].outputs[0]["text"].strip() == "ipc"
    assert "without encryption" not in out.stderr and socket_dirs() <= before  # (its folder is gone)


def test_run_reports_a_failing_cell(tmp_path: Path) -> None:
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1 / 0")]
    path = tmp_path / "bad.ipynb"
    nbformat.write(nb, path)
    out = a0nb("run", str(path), "--kernel", "python3")
    assert out.returncode == 1 and "ZeroDivisionError" in out.stderr
    assert (tmp_path / "bad.executed.ipynb").is_file()
