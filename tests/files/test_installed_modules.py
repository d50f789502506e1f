"""The installation's own files (bundled extensions, tools, providers) are imported once per process and
shared by every agent; an edited file is imported again, a user's file stays one module per agent, and the
foreign import names a loaded file may use live only while it loads."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.diagnostics import Diagnostics
from a0nb.files import loader as loader_mod
from a0nb.files.import_aliases import AliasFinder, AliasScope
from a0nb.files.loader import InstalledModules, ModuleLoader
from a0nb.testing import answer

EXT = """from a0nb import Extension
VERSION = {version!r}
class Mark(Extension):
    def execute(self, loop_data=None, **kwargs):
        self.agent.data.setdefault("marks", []).append(VERSION)
"""


def _class_of(agent: Agent, point: str, name: str) -> type:
    return next(info.factory for info in agent.extensions.resolve(point) if info.name == name)


def test_two_agents_share_the_bundled_extension_modules(nb: Path) -> None:
    first, second = Agent(nb, model=[answer("a")]), Agent(nb, model=[answer("b")])
    bundled = _class_of(first, "message_loop_start", "_10_iteration_no")
    assert _class_of(second, "message_loop_start", "_10_iteration_no") is bundled
    assert first.ask("go").text == "a" and second.ask("go").text == "b"


def test_a_user_file_is_one_module_per_agent(nb: Path) -> None:
    folder = nb / "extensions" / "message_loop_start"
    folder.mkdir(parents=True)
    (folder / "_20_mark.py").write_text(EXT.format(version="user"))
    first, second = Agent(nb, model=[answer("a")]), Agent(nb, model=[answer("b")])
    assert _class_of(first, "message_loop_start", "_20_mark") is not _class_of(second, "message_loop_start", "_20_mark")


@pytest.fixture
def installed_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder that counts as part of the installation, with a cache of its own."""
    folder = tmp_path / "install" / "extensions"
    folder.mkdir(parents=True)
    monkeypatch.setattr(loader_mod, "installed", lambda path: path.startswith(str(folder)))
    return folder


def test_an_edited_installed_file_is_imported_again(installed_dir: Path) -> None:
    shared = InstalledModules()
    path = installed_dir / "_10_mark.py"
    path.write_text(EXT.format(version="one"))
    a, b = ModuleLoader(Diagnostics(), shared=shared), ModuleLoader(Diagnostics(), shared=shared)
    first = a.load(path, "extensions._10_mark", "extension")
    assert first is not None and b.load(path, "extensions._10_mark", "extension") is first
    path.write_text(EXT.format(version="two, longer"))
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)
    again = b.load(path, "extensions._10_mark", "extension")
    assert again is not first and again.VERSION == "two, longer"
    assert a.load(path, "extensions._10_mark", "extension") is again
    # another module name for the same file is another module (its `@extensible` point names differ)
    assert ModuleLoader(Diagnostics(), shared=shared).load(path, "other._10_mark", "extension") is not again


def test_the_classes_of_an_installed_file_are_found_once_per_version(installed_dir: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from a0nb import Extension
    from a0nb.files.loader import subclasses_in
    shared = InstalledModules()
    monkeypatch.setattr(loader_mod, "INSTALLED", shared)
    path = installed_dir / "_10_mark.py"
    path.write_text(EXT.format(version="one"))
    module = ModuleLoader(Diagnostics(), shared=shared).load(path, "extensions._10_mark", "extension")
    assert module is not None and [c.__name__ for c in subclasses_in(module, Extension)] == ["Mark"]
    assert shared.classes[module][Extension] == [module.Mark]  # found once, then read
    assert subclasses_in(module, Extension) == [module.Mark] and subclasses_in(module, int) == []
    path.write_text(EXT.format(version="two, longer") + "class Other(Mark):\n    pass\n")
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)
    again = ModuleLoader(Diagnostics(), shared=shared).load(path, "extensions._10_mark", "extension")
    assert again is not module and [c.__name__ for c in subclasses_in(again, Extension)] == ["Mark", "Other"]


def test_a_broken_installed_file_is_reported_by_each_loader(installed_dir: Path) -> None:
    shared = InstalledModules()
    path = installed_dir / "_10_broken.py"
    path.write_text("raise RuntimeError('boom')\n")
    for _ in range(2):
        d = Diagnostics()
        assert ModuleLoader(d, shared=shared).load(path, "extensions._10_broken", "extension") is None
        assert any("boom" in str(x) for x in d), list(d)


def test_the_alias_scope_removes_only_what_it_served() -> None:
    finder = AliasFinder()
    assert "agent_core" not in sys.modules
    with AliasScope(finder):
        import agent_core.types  # noqa: F401  (served as a0nb.compat.agent_core)
        with AliasScope(finder):  # a file that loads another while it loads
            import agent_core  # noqa: F401
        assert "agent_core" in sys.modules
    assert "agent_core" not in sys.modules and finder.served == []
    assert finder not in sys.meta_path


def test_installed_files_import_no_name_of_the_search_hierarchy() -> None:
    # a shared module's imports go through the plain redirection (InstalledModules): an installed file naming a
    # hierarchy path (`extensions.…`, `tools.…`, `plugins.…`, `usr.…`, `python.…`) would resolve it in no agent's folders
    import ast

    from a0nb.files.imports import FOLDER_TOPS
    from a0nb.folder_trust import BUNDLED_PARTS
    from a0nb.resources import bundled_root
    tops = set(FOLDER_TOPS) | {"python"}
    offenders = []
    for part in BUNDLED_PARTS:
        for path in sorted((bundled_root() / part).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
                offenders += [f"{path}: {n}" for n in names if n.partition(".")[0] in tops]
    assert offenders == []


def test_module_names_are_kept_per_pair_of_paths(tmp_path: Path) -> None:
    from a0nb.files.loader import module_name_for
    root = tmp_path / "root"
    assert module_name_for(root, root / "extensions" / "system_prompt" / "_10_a.py") == "extensions.system_prompt._10_a"
    assert module_name_for(Path(str(root)), root / "tools" / "my-tool.py") == "tools.my_tool"  # a new input: its own name
    assert module_name_for(tmp_path / "other", root / "tools" / "my-tool.py") == "my-tool"  # (not below the root: the stem)
