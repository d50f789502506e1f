"""Extensions: override by file name, order, one class per file, @extensible (reference §8.3 9–12)."""
from __future__ import annotations

from pathlib import Path

import pytest

from a0nb import Agent, Extension, extensible
from a0nb.diagnostics import Diagnostics
from a0nb.errors import A0Error
from a0nb.files.extensions import Extensions
from a0nb.files.hierarchy import Hierarchy
from a0nb.files.loader import ModuleLoader

EXT = """from a0nb import Extension
class {cls}(Extension):
    def execute(self, log=None, **kwargs):
        log.append("{tag}")
"""


def _registry(nb: Path, tmp_path: Path, profile: str = "default") -> Extensions:
    d = Diagnostics()
    h = Hierarchy(nb, profile, home=tmp_path / "home", diagnostics=d)
    return Extensions(h, ModuleLoader(d), d)


def _write(folder: Path, name: str, cls: str, tag: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(EXT.format(cls=cls, tag=tag))


def test_override_and_order_across_roots(nb: Path, tmp_path: Path) -> None:
    # reference 9: default _10_a, _20_b; profile _15_c, _20_b → _10_a, _15_c, _20_b (profile)
    base = nb / "extensions" / "monologue_start"
    prof = nb / "agents" / "teacher" / "extensions" / "python" / "monologue_start"
    _write(base, "_10_a.py", "A", "a-default")
    _write(base, "_20_b.py", "B", "b-default")
    _write(prof, "_15_c.py", "C", "c-profile")
    _write(prof, "_20_b.py", "B2", "b-profile")
    reg = _registry(nb, tmp_path, "teacher")
    log: list[str] = []
    reg.call_sync("monologue_start", None, log=log)
    assert log == ["a-default", "c-profile", "b-profile"]
    infos = reg.resolve("monologue_start")
    b = next(i for i in infos if i.name == "_20_b")
    assert b.root_label == "notebook-profile" and b.overrode == ((base / "_20_b.py").resolve(),)


def test_two_classes_in_a_file_last_runs_with_diagnostic(nb: Path, tmp_path: Path) -> None:
    folder = nb / "extensions" / "monologue_start"
    folder.mkdir(parents=True)
    (folder / "_10_two.py").write_text(
        "from a0nb import Extension\n"
        "class Alpha(Extension):\n    def execute(self, log=None, **kw): log.append('alpha')\n"
        "class Zed(Extension):\n    def execute(self, log=None, **kw): log.append('zed')\n")
    reg = _registry(nb, tmp_path)
    log: list[str] = []
    reg.call_sync("monologue_start", None, log=log)
    assert log == ["zed"]
    assert any("several Extension subclasses" in d.message for d in reg.diagnostics)


def test_broken_file_is_reported_and_others_still_run(nb: Path, tmp_path: Path) -> None:
    folder = nb / "extensions" / "monologue_start"
    _write(folder, "_10_ok.py", "Ok", "ok")
    (folder / "_20_broken.py").write_text("import nonexistent_module_xyz\n")
    (folder / "_30_none.py").write_text("x = 1\n")
    reg = _registry(nb, tmp_path)
    log: list[str] = []
    reg.call_sync("monologue_start", None, log=log)
    assert log == ["ok"]
    paths = {d.path for d in reg.diagnostics if d.area == "extension"}
    assert str(folder / "_20_broken.py") in {str(Path(p)) for p in paths}
    assert any(d.path and d.path.endswith("_30_none.py") for d in reg.diagnostics)
    broken = next(d for d in reg.diagnostics if d.path and d.path.endswith("_20_broken.py"))
    assert broken.line == 1 and "nonexistent_module_xyz" in broken.message


def test_unknown_point_folder_is_reported(nb: Path, tmp_path: Path) -> None:
    (nb / "extensions" / "monologue_strat").mkdir(parents=True)
    reg = _registry(nb, tmp_path)
    reg.resolve("monologue_start")
    [d] = reg.diagnostics.of("extension-point")
    assert "monologue_strat" in d.message and "monologue_start" in d.fix


def test_agent_zeros_web_ui_point_folder_is_a_note_not_a_rename(nb: Path, tmp_path: Path) -> None:
    """Upstream's `webui_ws_connect` extensions, placed as Agent Zero lays them out, are not misnamed: the point has no
    counterpart in a notebook. The note says so, and does not suggest renaming the folder."""
    (nb / "extensions" / "webui_ws_connect").mkdir(parents=True)
    reg = _registry(nb, tmp_path)
    reg.resolve("monologue_start")
    [d] = reg.diagnostics.of("extension-point")
    assert d.severity == "info" and "never run" in d.message and "web UI" in d.message
    assert "rename" not in d.fix


def test_failing_extension_error_names_file(nb: Path, tmp_path: Path) -> None:
    folder = nb / "extensions" / "monologue_start"
    folder.mkdir(parents=True)
    (folder / "_10_boom.py").write_text(
        "from a0nb import Extension\nclass Boom(Extension):\n    def execute(self, **kw):\n        raise ValueError('boom')\n")
    reg = _registry(nb, tmp_path)
    with pytest.raises(A0Error) as info:
        reg.call_sync("monologue_start", None)
    assert "_10_boom.py" in str(info.value) and "boom" in str(info.value)


def test_registered_function_takes_a_subset_of_kwargs(nb: Path, tmp_path: Path) -> None:
    reg = _registry(nb, tmp_path)
    seen = []
    reg.register("reasoning_stream", lambda text: seen.append(text), name="spy")
    reg.call_sync("reasoning_stream", None, loop_data=None, text="x")
    assert seen == ["x"]
    with pytest.raises(A0Error):
        reg.register("no_such_point", lambda: None)


class _Host:
    """Anything with an `extensions` registry can carry @extensible points."""

    def __init__(self, registry: Extensions) -> None:
        self.extensions = registry

    @extensible
    def plus_one(self, value: int) -> int:
        self.called = True
        return value + 1

    @extensible
    async def async_plus_one(self, value: int) -> int:
        return value + 1


def _point_dir(nb: Path, fn: object, when: str) -> Path:
    point = getattr(fn, "__a0_point__")
    return nb.joinpath("extensions", *point.split("/"), when)


def test_extensible_start_result_skips_call_end_still_runs(nb: Path, tmp_path: Path) -> None:
    # reference 11 (first part)
    start = _point_dir(nb, _Host.plus_one, "start")
    end = _point_dir(nb, _Host.plus_one, "end")
    start.mkdir(parents=True)
    end.mkdir(parents=True)
    (start / "_10_skip.py").write_text("from a0nb import Extension\nclass S(Extension):\n"
                                       "    def execute(self, data=None, **kw): data['result'] = 42\n")
    (end / "_10_mark.py").write_text("from a0nb import Extension\nclass E(Extension):\n"
                                     "    def execute(self, data=None, **kw): data['kwargs']['ended'] = True\n")
    host = _Host(_registry(nb, tmp_path))
    kwargs: dict[str, object] = {}
    assert host.plus_one(1, **kwargs) == 42
    assert not hasattr(host, "called")


def test_extensible_start_exception_raised_end_not_run(nb: Path, tmp_path: Path) -> None:
    start = _point_dir(nb, _Host.plus_one, "start")
    end = _point_dir(nb, _Host.plus_one, "end")
    start.mkdir(parents=True)
    end.mkdir(parents=True)
    (start / "_10_raise.py").write_text("from a0nb import Extension\nclass S(Extension):\n"
                                        "    def execute(self, data=None, **kw): data['exception'] = KeyError('stop')\n")
    (end / "_10_never.py").write_text("from a0nb import Extension\nclass E(Extension):\n"
                                      "    def execute(self, data=None, **kw): raise AssertionError('end ran')\n")
    host = _Host(_registry(nb, tmp_path))
    with pytest.raises(KeyError):
        host.plus_one(1)


def test_extensible_end_clears_exception_and_start_replaces_args(nb: Path, tmp_path: Path) -> None:
    # reference 11 (third part) and 12
    start = _point_dir(nb, _Host.plus_one, "start")
    end = _point_dir(nb, _Host.plus_one, "end")
    start.mkdir(parents=True)
    end.mkdir(parents=True)
    (start / "_10_args.py").write_text("from a0nb import Extension\nclass S(Extension):\n"
                                       "    def execute(self, data=None, **kw):\n"
                                       "        data['args'] = (data['args'][0], 'not a number')\n")
    (end / "_10_clear.py").write_text("from a0nb import Extension\nclass E(Extension):\n"
                                      "    def execute(self, data=None, **kw):\n"
                                      "        assert isinstance(data['exception'], TypeError)\n"
                                      "        data['exception'] = None\n")
    host = _Host(_registry(nb, tmp_path))
    assert host.plus_one(1) is None


def test_extensible_async_start_replaces_args(nb: Path, tmp_path: Path) -> None:
    import asyncio
    start = _point_dir(nb, _Host.async_plus_one, "start")
    start.mkdir(parents=True)
    (start / "_10_args.py").write_text("from a0nb import Extension\nclass S(Extension):\n"
                                       "    async def execute(self, data=None, **kw):\n"
                                       "        data['args'] = (data['args'][0], 10)\n")
    host = _Host(_registry(nb, tmp_path))
    assert asyncio.run(host.async_plus_one(1)) == 11


class _Args:
    def __init__(self, registry: Extensions) -> None:
        self.extensions = registry

    @extensible
    def given(self, a: object, b: object = "b", **kw: object) -> tuple[object, ...]:
        return a, b, tuple(sorted(kw.items()))

    @extensible
    async def async_given(self, a: object, b: object = "b", **kw: object) -> tuple[object, ...]:
        return a, b, tuple(sorted(kw.items()))


def test_an_unhooked_extensible_call_hands_on_its_arguments_and_an_agent_keyword_picks_the_registry(
        nb: Path, tmp_path: Path) -> None:
    """With no extension at the function's points the call goes straight through (positional arguments alone,
    or with keywords); an `agent=` keyword still names the registry whose extensions run (upstream's order)."""
    import asyncio
    host = _Args(_registry(nb, tmp_path))
    assert host.given(1) == (1, "b", ())
    assert host.given(1, 2) == (1, 2, ())
    assert host.given(1, b=3, c=4) == (1, 3, (("c", 4),))
    assert asyncio.run(host.async_given(1, 2)) == (1, 2, ())
    assert asyncio.run(host.async_given(a=1, c=5)) == (1, "b", (("c", 5),))
    other_nb = tmp_path / "other"
    start = _point_dir(other_nb, _Args.given, "start")
    start.mkdir(parents=True)
    (start / "_10_args.py").write_text("from a0nb import Extension\nclass S(Extension):\n"
                                       "    def execute(self, data=None, **kw): data['args'] = (data['args'][0], 'hooked')\n")
    other = _Args(_registry(other_nb, tmp_path))
    assert host.given(1, agent=other) == ("hooked", "b", (("agent", other),))
    assert host.given(1) == (1, "b", ())  # (host's own registry: still no extension)


def test_extensible_overhead_smoke(nb: Path, tmp_path: Path) -> None:
    # upstream test 8.2 item 7: 10,000 calls return the expected value
    host = _Host(_registry(nb, tmp_path))
    assert sum(host.plus_one(i) for i in range(10_000)) == sum(range(1, 10_001))


def test_agent_loop_extension_edits_apply_next_step(nb: Path) -> None:
    from a0nb.testing import answer, tool_reply
    folder = nb / "extensions" / "message_loop_prompts_after"
    folder.mkdir(parents=True)
    note = folder / "_80_note.py"
    note.write_text("from a0nb import Extension\nclass N(Extension):\n"
                    "    def execute(self, loop_data=None, **kw): loop_data.extras_temporary['note'] = 'first'\n")
    agent = Agent(nb, model=[tool_reply("code_execution", runtime="python", code="1+1"), answer("ok")])

    def edit(tool_name: str = "", **kw: object) -> None:
        note.write_text("from a0nb import Extension\nclass N(Extension):\n"
                        "    def execute(self, loop_data=None, **kw): loop_data.extras_temporary['note'] = 'second'\n")
        import os, time
        os.utime(note, ns=(time.time_ns(), time.time_ns() + 10_000_000))

    agent.register_extension("tool_execute_before", edit)
    turn = agent.ask("go")
    notes = [next(p.text for p in c.parts if p.label == "extras: note") for c in turn.calls]
    assert notes == ["first", "second"]
    part = next(p for p in turn.calls[0].parts if p.label == "extras: note")
    assert part.extension == "_80_note" and part.origin == "temporary"
