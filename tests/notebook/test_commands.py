"""The subcommand table: every entry resolves to a function or a view, a new subcommand is one module plus
one table entry (dispatch, help and completion follow), and completion does not depend on the magic."""
from __future__ import annotations

import ast
import inspect
import sys
import types
from pathlib import Path
from typing import Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

import a0nb.notebook.completion as completion
from a0nb.notebook.commands import SUBCOMMANDS, Host, Sub, help_text
from a0nb.notebook.completion import complete
from a0nb.notebook.magics import get_magics
from test_magics import dispose, make_shell  # type: ignore[import-not-found]


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.chdir(tmp_path)
    sh = make_shell()
    sh.run_line_magic("load_ext", "a0nb")
    yield sh
    sh.run_line_magic("unload_ext", "a0nb")
    dispose()


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_entry_resolves(name: str) -> None:
    sub = SUBCOMMANDS[name]
    assert sub.usage.startswith(f"%a0 {name}")
    if sub.view:
        assert not sub.run
        return
    fn = sub.handler()
    assert list(inspect.signature(fn).parameters)[:2] == ["host", "rest"]


def test_completion_does_not_import_the_magic() -> None:
    tree = ast.parse(Path(completion.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "a0nb.notebook.magics" not in imported
    assert "a0nb.notebook.commands" in imported


def test_a_new_subcommand_is_one_module_and_one_entry(shell: InteractiveShell,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[Host, str]] = []
    module = types.ModuleType("a0nb.notebook.commands.shout")

    def shout(host: Host, rest: str) -> None:
        seen.append((host, rest))
        host.out.note(rest.upper())
    module.shout = shout  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(SUBCOMMANDS, "shout", Sub("%a0 shout TEXT", "say it louder", "shout:shout"))

    shell.run_line_magic("a0", "shout hello there")
    assert seen == [(get_magics(shell), "hello there")]
    assert shell.display_pub.outputs[-1]["data"]["text/plain"] == "HELLO THERE"
    assert "%a0 shout TEXT" in help_text()
    assert "shout" in complete(get_magics(shell), "%a0 sh", 0, 6, "sh")
