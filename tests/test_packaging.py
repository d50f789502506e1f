"""The wheel ships prompts/ agents/ plugins/ tools/ extensions/ skills/ kernel/, and a non-editable
install in a fresh venv renders the default prompt from the installed copy."""
from __future__ import annotations

import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True, timeout=240)
    [whl] = out.glob("a0nb-*.whl")
    return whl


def test_wheel_contains_bundled_folders(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("a0nb/_bundled/prompts/agent.system.main.md", "a0nb/_bundled/agents/default/agent.yaml",
                     "a0nb/_bundled/tools/response.py", "a0nb/_bundled/tools/response.py.dox.md",
                     "a0nb/_bundled/extensions/system_prompt/_10_main_prompt.py",
                     "a0nb/_bundled/providers/_10_think_tags.py", "a0nb/_bundled/providers/_20_native_tool_calls.py",
                     "a0nb/_bundled/skills/pandas-inspect/SKILL.md", "a0nb/py.typed"):
        assert required in names, required
    assert not any(n.startswith("a0nb/_bundled/") and "__pycache__" in n for n in names)


def test_non_editable_install_in_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True, timeout=240)
    deps = sysconfig.get_paths()["purelib"]  # dependencies come from the test environment, a0nb from the wheel
    script = (f"import sys; sys.path.append({deps!r}); import a0nb, pathlib;"
              "print(pathlib.Path(a0nb.__file__).parent.parent == pathlib.Path(sys.prefix) / 'lib' or True);"
              "print(a0nb.__file__); r = a0nb.render_prompt('agent.system.main.md', '.');"
              "print(r.sources[0].path); print(len(r.text));"
              "from a0nb.providers.extension import bundled_provider_extensions as b;"
              "print(' '.join(str(e.path) for e in b()))")
    out = subprocess.run([str(py), "-c", script], check=True, capture_output=True, text=True, cwd=tmp_path,
                         timeout=120).stdout.splitlines()
    assert str(env_dir) in out[1]
    assert "_bundled/prompts/agent.system.main.md" in out[2] and str(env_dir) in out[2]
    assert int(out[3]) > 500
    shipped = out[4].split()  # the bundled provider extensions load from the installed wheel
    assert [Path(p).name for p in shipped] == ["_10_think_tags.py", "_20_native_tool_calls.py"]
    assert all(str(env_dir) in p for p in shipped)


def test_every_builtin_tool_has_a_dox_file() -> None:
    tools = sorted(p for p in (ROOT / "tools").glob("*.py") if not p.name.startswith("_"))
    assert tools
    for tool in tools:
        dox = tool.with_name(tool.name + ".dox.md")
        assert dox.is_file(), f"{dox.name} is missing"
        text = dox.read_text()
        for heading in ("Purpose", "Arguments", "Output", "break_loop", "Side effects", "Prompt contract",
                        "How it is verified"):
            assert heading in text, f"{dox.name} lacks {heading}"
