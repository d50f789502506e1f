"""a0nb.ext is the one public extension API: bundled files import only from it, and it names every point."""
from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import a0nb.ext as ext
from a0nb.files.points import POINTS

REPO = Path(__file__).resolve().parents[1]
BUNDLED = ("extensions", "tools", "plugins", "providers", "agents", "skills", "prompts")


def _bundled_python_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", *BUNDLED], cwd=REPO, capture_output=True, text=True, check=True)
    return [REPO / f for f in out.stdout.split() if f.endswith(".py")]


def _a0nb_imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "a0nb":
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "a0nb"]
    return found


def test_bundled_files_import_only_the_public_api() -> None:
    files = _bundled_python_files()
    assert len(files) > 20
    bad = [f"{p.relative_to(REPO)}:{line} imports {mod}" for p in files for line, mod in _a0nb_imports(p)
           if mod != "a0nb.ext"]
    assert not bad, "bundled files must import from a0nb.ext only:\n" + "\n".join(bad)


def test_every_name_bundled_files_import_is_public() -> None:
    public = set(ext.__all__)
    missing = []
    for p in _bundled_python_files():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "a0nb.ext":
                missing += [f"{p.relative_to(REPO)}: {a.name}" for a in node.names if a.name not in public]
    assert not missing


def test_every_point_has_a_constant_and_all_names_resolve() -> None:
    constants = {getattr(ext, n) for n in ext.__all__ if n.isupper() and isinstance(getattr(ext, n), str)}
    assert set(POINTS) <= constants
    for name in ext.__all__:
        assert hasattr(ext, name), name
