"""An `async def execute` at the synchronous `agent_init` point (Agent Zero's own example extension is one) runs
to its end wherever the agent is built: in plain Python, and with an event loop running in the building thread,
as in a notebook cell (the kernel's loop) or in a tool on the agent's loop. It used to be refused there."""
from __future__ import annotations

import asyncio
import contextvars
import shutil
import sys
from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.errors import ExtensionError
from a0nb.testing import answer

sys.path.insert(0, str(Path(__file__).parent))
from corpus_judge import find_corpus  # noqa: E402

CORPUS = find_corpus()
SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("a0nb_test_seen", default="unset")

MARK = """import asyncio
import sys
from a0nb import Extension


class Mark(Extension):
    async def execute(self, **kwargs):
        await asyncio.sleep(0)
        self.agent.data["marked"] = sys.modules[{module!r}].SEEN.get()
"""

BROKEN = """from a0nb import Extension


class Broken(Extension):
    async def execute(self, **kwargs):
        raise ValueError("no such setting")
"""


def _place(nb: Path, name: str, text: str) -> Path:
    path = nb / "extensions" / "agent_init" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _built_in_a_running_loop(nb: Path) -> Agent:
    async def build() -> Agent:
        SEEN.set("the builder's context")
        return Agent(nb, model=[answer("done")])
    return asyncio.run(build())


def test_an_async_agent_init_runs_in_plain_python_and_under_a_running_loop(nb: Path) -> None:
    _place(nb, "_20_mark.py", MARK.format(module=__name__))
    SEEN.set("plain")
    assert Agent(nb, model=[answer("done")]).data["marked"] == "plain"
    agent = _built_in_a_running_loop(nb)
    assert agent.data["marked"] == "the builder's context"  # (ran to its end, with the builder's context)
    assert agent.ask("go").text == "done"


def test_an_async_agent_init_that_raises_names_its_file(nb: Path) -> None:
    path = _place(nb, "_20_broken.py", BROKEN)
    with pytest.raises(ExtensionError, match="_20_broken") as raised:
        _built_in_a_running_loop(nb)
    assert "no such setting" in str(raised.value) or "no such setting" in str(raised.value.__cause__)
    path.unlink()
    assert _built_in_a_running_loop(nb).ask("go").text == "done"


@pytest.mark.skipif(CORPUS is None, reason="the upstream corpus (shared/a0-upstream) is not here")
def test_agent_zeros_example_extension_runs_where_a_notebook_builds_the_agent(nb: Path) -> None:
    assert CORPUS is not None
    source = CORPUS / "agents" / "_example" / "extensions" / "agent_init" / "_10_example_extension.py"
    shutil.copyfile(source, _place(nb, source.name, ""))
    from a0nb.compat.agent import Agent as AgentZeroView
    agent = _built_in_a_running_loop(nb)
    assert AgentZeroView.of(agent).agent_name == "SuperAgent0"  # (what the extension's self.agent is)
