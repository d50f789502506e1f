"""`a0nb demo` (`make demo`): notebooks/01-quickstart runs headless from its cassette into an executed
notebook and an HTML export carrying the inspector's composition bar; a cassette miss fails the demo."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from a0nb.notebook import demo

QUICKSTART = demo.repo_root() / "notebooks" / demo.QUICKSTART


def outputs_of(path: Path) -> list[dict]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]


def test_demo_writes_the_executed_notebook_and_its_html(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert demo.main(output_dir=out) == 0
    executed, page = out / "01-quickstart.executed.ipynb", out / "01-quickstart.html"
    assert executed.is_file() and page.is_file()
    assert "widgets" not in json.loads(executed.read_text(encoding="utf-8"))["metadata"]
    outputs = outputs_of(executed)
    assert outputs
    assert [o for o in outputs if o["output_type"] == "error" or o.get("name") == "stderr"] == []
    assert [o for o in outputs if o.get("metadata", {}).get("a0", {}).get("error")] == []
    html = page.read_text(encoding="utf-8")
    assert "Context composition" in html and 'title="system: main prompt: ' in html  # the composition bar
    assert "Oslo sold the most" in html  # the replayed answer
    printed, errors = capfd.readouterr()
    assert str(executed) in printed and str(page) in printed and "make lab" in printed
    assert "without encryption" not in errors  # the kernel's sockets are Unix sockets in a private folder


def test_a_cassette_miss_fails_the_demo_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "notebooks" / demo.QUICKSTART
    shutil.copytree(QUICKSTART, folder)
    cassette = folder / f"{demo.QUICKSTART}.cassette.yaml"
    entries = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    for entry in entries:  # as if the question had been different when the cassette was recorded
        entry["request"]["messages"][-1]["content"] += " (changed)"
    cassette.write_text(yaml.safe_dump(entries, allow_unicode=True), encoding="utf-8")
    monkeypatch.setattr(demo, "repo_root", lambda: tmp_path)
    assert demo.main(output_dir=tmp_path / "out") == 1
    assert "replay: no recorded call" in capsys.readouterr().err
    assert (tmp_path / "out" / "01-quickstart.html").is_file()  # written anyway, to look at


def test_a_missing_quickstart_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demo, "repo_root", lambda: tmp_path)
    assert demo.main(output_dir=tmp_path / "out") == 1
    assert "not found" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_replay_env_keeps_the_shell_but_not_its_a0nb_settings(tmp_path: Path) -> None:
    shell = {"PATH": "/bin", "A0NB_MODEL": "openai/gpt-4o", "A0NB_CTX_LENGTH": "9000", "A0NB_PROFILE": "x",
             "A0NB_HOME": "/somewhere", "A0NB_RECORD": "1"}
    env = demo.replay_env(tmp_path, shell)
    assert env["PATH"] == "/bin" and env["A0NB_RECORD"] == "1"
    assert env["A0NB_HOME"] == str(tmp_path)
    assert not {"A0NB_MODEL", "A0NB_CTX_LENGTH", "A0NB_PROFILE"} & set(env)
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
