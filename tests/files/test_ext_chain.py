"""Running a point's chain (files/ext_chain.py): a fire of a point with no extension is counted and awaited like
any other; each extras key and system section is attributed to the extension that set it, by identity (an
equal but new value is a new setting; writing back the same object is not), whether the extension is a
bundled file, a user file or a registration; the cancel flag stops a turn at its next checkpoint."""
from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from a0nb import Agent
from a0nb.engine.control import TurnControl, cancelled
from a0nb.errors import TurnInterrupted
from a0nb.testing import answer, tool_reply


def _fresh(text: str) -> str:
    return "".join(list(text))  # an equal string that is a new object


def _parts(agent: Agent) -> dict[str, tuple[str | None, str | None]]:
    call = agent.ask("go").calls[-1]
    return {p.label: (p.extension, p.origin) for p in call.parts if p.label.startswith("extras: ")}


def test_extras_are_attributed_by_identity_to_the_last_extension_that_set_them(nb: Path) -> None:
    agent = Agent(nb, model=[answer("ok")])

    def a_set(loop_data: Any) -> None:
        loop_data.extras_persistent["k"] = _fresh("value")
        loop_data.extras_temporary["gone"] = "x"

    def b_equal(loop_data: Any) -> None:
        loop_data.extras_persistent["k"] = _fresh("value")  # equal but new: b set it

    def c_same(loop_data: Any) -> None:
        loop_data.extras_persistent["k"] = loop_data.extras_persistent["k"]  # the same object: not a setting
        loop_data.extras_persistent["c"] = [1]
        loop_data.extras_persistent["c"].append(2)

    def d_replace(loop_data: Any) -> None:
        loop_data.extras_temporary = {"t": "new dict"}  # a new mapping: each of its keys was set by d

    def e_mutate(loop_data: Any) -> None:
        loop_data.extras_persistent["c"].append(3)  # changed in place: still c's

    for fn in (a_set, b_equal, c_same, d_replace, e_mutate):
        agent.register_extension("message_loop_prompts_after", fn)
    parts = _parts(agent)
    assert parts == {"extras: k": ("b_equal", "persistent"), "extras: c": ("c_same", "persistent"),
                     "extras: t": ("d_replace", "temporary")}


def _fire(agent: Agent, how: str, ld: Any) -> None:
    if how == "sync":
        agent.fire_sync("monologue_start", loop_data=ld)
    else:
        asyncio.run(agent.fire("monologue_start", loop_data=ld))


@pytest.mark.parametrize("how", ["async", "sync"])
def test_extras_attribution_is_the_same_for_both_chains_and_stops_at_a_failing_extension(nb: Path, how: str) -> None:
    """Attributed in one pass when the chain ends: each key to the last extension that set it, by identity, the
    one that raised to nobody (what it set before raising is not its setting), also when it stops the chain."""
    from a0nb.engine.loop_data import LoopData
    from a0nb.errors import ExtensionError

    agent = Agent(nb, model=[answer("ok")])

    def a_set(loop_data: Any) -> None:
        loop_data.extras_temporary["t"] = _fresh("from a")
        loop_data.extras_persistent["p"] = _fresh("from a")
        loop_data.extras_persistent["q"] = "kept"

    def b_some(loop_data: Any) -> None:
        loop_data.extras_temporary["t"] = loop_data.extras_temporary["t"]  # the same object: still a's
        loop_data.extras_persistent["p"] = _fresh("from a")  # equal but new: b's
        loop_data.extras_temporary["moved"] = loop_data.extras_persistent.pop("q")  # the same value, other dict

    def c_fail(loop_data: Any) -> None:
        if loop_data.iteration:
            loop_data.extras_temporary["t"] = "c"
            raise ValueError("boom")

    for fn in (a_set, b_some, c_fail):
        agent.register_extension("monologue_start", fn)
    ld = LoopData(iteration=0)
    _fire(agent, how, ld)
    origins = {k: (info.name, kind) for k, (info, kind) in ld.extras_origin.items()}
    expected = {"t": ("a_set", "temporary"), "p": ("b_some", "persistent"), "q": ("a_set", "persistent"),
                "moved": ("b_some", "temporary")}  # (a key's origin stays when it is removed, as before)
    assert origins == expected
    ld = LoopData(iteration=1)
    with pytest.raises(ExtensionError):
        _fire(agent, how, ld)
    assert {k: (info.name, kind) for k, (info, kind) in ld.extras_origin.items()} == expected


def test_system_sections_are_attributed_to_the_extension_that_appended_them(nb: Path) -> None:
    agent = Agent(nb, model=[answer("ok"), answer("ok")])

    async def zz_two(system_prompt: list[str], loop_data: Any) -> None:
        system_prompt += ["first extra section", "second extra section"]

    agent.register_extension("system_prompt", zz_two)
    agent.register_extension("system_prompt", lambda system_prompt: system_prompt.append("third"), name="zzz_sync")
    call = agent.ask("go").calls[-1]
    system = [p for p in call.parts if p.kind == "system"]
    tail = [(p.text, p.extension) for p in system[-3:]]
    assert tail == [("first extra section", "zz_two"), ("second extra section", "zz_two"), ("third", "zzz_sync")]
    assert all(p.extension not in ("zz_two", "zzz_sync") for p in system[:-3])


def test_a_point_with_no_extension_is_counted_and_can_be_awaited_like_any_other(nb: Path) -> None:
    agent = Agent(nb, model=[answer("ok")])
    before = agent.extensions.stats.counts.get("banners", 0)

    async def fire_empty() -> None:
        empty = agent.fire("banners", banners=[])
        await empty
        await empty  # (what an empty point returns is reusable)
        assert await asyncio.gather(agent.fire("banners", banners=[])) == [None]

    asyncio.run(fire_empty())
    assert agent.extensions.stats.counts["banners"] == before + 2
    seen: list[int] = []
    agent.register_extension("banners", lambda banners: seen.append(len(banners)))

    async def fire_twice() -> None:
        await agent.fire("banners", banners=[])
        assert await asyncio.gather(agent.fire("banners", banners=[1])) == [None]

    asyncio.run(fire_twice())
    assert seen == [0, 1] and agent.extensions.stats.counts["banners"] == before + 4


def test_the_cancel_flag_is_per_turn_and_read_at_the_next_checkpoint(nb: Path) -> None:
    assert not cancelled()  # outside any turn
    agent = Agent(nb, model=[tool_reply("stop"), answer("not reached")])
    agent.register_tool(lambda: agent.interrupt() or "asked to stop", name="stop")
    with pytest.raises(TurnInterrupted):
        agent.ask("go")
    assert agent.turns[-1].interrupted and len(agent.turns[-1].calls) == 1
    assert not cancelled()
    control, seen = TurnControl(), []

    async def turn_body() -> None:
        control.start()
        seen.append(cancelled())
        agent.checkpoint()  # not raised: goes on
        assert control.cancel is not None
        worker = threading.Thread(target=control.cancel.set)  # (what interrupt() does from another thread)
        worker.start()
        worker.join()
        seen.append(cancelled())
        with pytest.raises(TurnInterrupted):
            agent.checkpoint()
        control.end()
        seen.append(cancelled())

    asyncio.run(turn_body())
    assert seen == [False, True, False]


def test_an_async_registration_is_stopped_at_the_time_limit_and_an_interrupt_is_not_a_time_out(nb: Path) -> None:
    from a0nb.errors import ExtensionError
    agent = Agent(nb, model=[answer("next")], settings={"extension_timeout": 0.3, "backoff": 0})
    ran: list[str] = []

    async def stuck(loop_data: Any) -> None:
        ran.append("started")
        await asyncio.sleep(600)

    agent.register_extension("message_loop_prompts_after", stuck)
    with pytest.raises(ExtensionError, match="took longer than 0.3 s"):
        agent.ask("go")
    agent.extensions.unregister("message_loop_prompts_after", "stuck")
    assert agent.ask("again").text == "next" and ran == ["started"]

    other = Agent(nb, model=[answer("never")], settings={"extension_timeout": 30})

    async def waits_for_interrupt(loop_data: Any) -> None:
        other.interrupt()  # (as Ctrl-C would, while the extension awaits)
        await asyncio.sleep(5)

    other.register_extension("message_loop_prompts_after", waits_for_interrupt)
    with pytest.raises(TurnInterrupted):
        other.ask("stop")
    assert other.turns[-1].interrupted and not other.diagnostics.of("extension")


def test_each_call_gets_a_fresh_instance_whether_or_not_the_class_has_its_own_init(nb: Path) -> None:
    # a class keeping the base __init__ is made without calling it (ext_chain.BARE): the instance must look the same
    from a0nb import Extension

    seen: list[tuple[str, int, Any, dict[str, Any], bool]] = []  # (what, id, agent, kwargs, state left on self)

    class Plain(Extension):
        async def execute(self, loop_data: Any = None, **kwargs: Any) -> None:
            seen.append(("plain", id(self), self.agent, self.kwargs, hasattr(self, "mark")))
            self.mark = True  # state on self lasts one call
            self.kwargs["x"] = 1  # its own dict, not shared with the next instance

    class Own(Extension):
        def __init__(self, agent: Any = None, **kwargs: Any) -> None:
            super().__init__(agent, **kwargs)
            self.made = "by its __init__"

        async def execute(self, loop_data: Any = None, **kwargs: Any) -> None:
            seen.append((self.made, id(self), self.agent, self.kwargs, hasattr(self, "mark")))
            self.mark = True

    agent = Agent(nb, model=[tool_reply("noop"), answer("ok")])
    agent.register_tool(lambda: "ok", name="noop")
    agent.register_extension("message_loop_start", Plain)
    agent.register_extension("message_loop_start", Own)
    assert agent.ask("go").text == "ok"
    assert [s[0] for s in seen] == ["by its __init__", "plain", "by its __init__", "plain"]  # (run order: names)
    assert all(s[2] is agent and not s[4] for s in seen)
    assert seen[1][3] == {"x": 1} and seen[3][3] == {"x": 1} and seen[1][3] is not seen[3][3]
    assert seen[0][3] == {} and seen[2][3] == {}
    from a0nb.files.ext_chain import BARE, CLASS
    hows = {info.name: how for info, how, _ in agent.extensions.bound["message_loop_start"]}
    assert hows["Plain"] == BARE and hows["Own"] == CLASS


def test_a_user_async_extension_runs_under_the_limit_counted_from_its_start(nb: Path) -> None:
    # the timer is armed only when the coroutine first suspends (ext_chain.run_chain); its limit still counts
    # the time it ran before, its later suspensions and errors behave as when awaited directly
    import time

    from a0nb.errors import ExtensionError
    agent = Agent(nb, model=[answer("ok"), answer("ok")], settings={"extension_timeout": 0.3, "backoff": 0})
    ran: list[str] = []

    async def suspends(loop_data: Any) -> None:
        await asyncio.sleep(0.01)
        try:
            await asyncio.sleep(0)
        finally:
            ran.append("suspended twice")
        loop_data.extras_temporary["after_await"] = "set after two suspensions"

    async def never_suspends(loop_data: Any) -> None:
        ran.append("inline")

    agent.register_extension("message_loop_prompts_after", suspends)
    agent.register_extension("message_loop_prompts_after", never_suspends)
    call = agent.ask("go").calls[-1]
    assert ran == ["inline", "suspended twice"]  # (run order: names)
    assert [(p.extension, p.text) for p in call.parts if p.label == "extras: after_await"][0][0] == "suspends"

    async def slow_then_suspends(loop_data: Any) -> None:
        time.sleep(0.4)  # over the limit before its first suspension: stopped there
        await asyncio.sleep(0.01)
        ran.append("went on")

    agent.register_extension("message_loop_prompts_after", slow_then_suspends)
    with pytest.raises(ExtensionError, match="took longer than 0.3 s"):
        agent.ask("again")
    assert "went on" not in ran
    agent.extensions.unregister("message_loop_prompts_after", "slow_then_suspends")

    async def fails_after_suspending(loop_data: Any) -> None:
        await asyncio.sleep(0)
        raise ValueError("bad value")

    agent.register_extension("message_loop_prompts_after", fails_after_suspending)
    with pytest.raises(ExtensionError, match="fails_after_suspending .*ValueError: bad value"):
        agent.ask("third")
