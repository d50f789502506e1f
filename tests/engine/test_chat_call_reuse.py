"""What a chat call keeps from the last one (engine/calls.py): the provider with the Crystal Lattice features around it
is looked at again when a features/ file is added or removed (mid-turn) or a feature is registered."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from a0nb import Agent
from a0nb.ext import FeaturePlugin
from a0nb.providers.lattice_features import FeaturedProvider
from a0nb.testing import answer, tool_reply

_FEATURE = '''
from a0nb.ext import FeaturePlugin


class Mark(FeaturePlugin):
    def init(self, config, state):
        return state

    def finalize(self, finals, natives, state):
        return [{**m, "metadata": {"marked": True}} for m in finals], natives, state
'''


class _Upper(FeaturePlugin):
    def init(self, config: Any, state: Any) -> Any:
        return state

    def finalize(self, finals: Any, natives: Any, state: Any) -> Any:
        return [{**m, "metadata": {"upper": True}} for m in finals], natives, state


def test_the_featured_provider_follows_the_features_files_and_registrations(nb: Path) -> None:
    agent = Agent(nb, model=[tool_reply("change", i=i) for i in range(2)] + [answer("done")])
    wrapped: list[bool] = []
    features = nb / "features"

    def change(i: int = 0) -> str:
        if i == 0:
            features.mkdir()
            (features / "mark.py").write_text(_FEATURE)
        else:
            (features / "mark.py").unlink()
        return "changed"

    agent.register_tool(change)
    agent.register_extension("chat_model_call_before",
                             lambda call_data: wrapped.append(isinstance(call_data["provider"], FeaturedProvider)),
                             name="spy")
    assert agent.ask("go").text == "done"
    assert wrapped == [False, True, False]
    assert [c.metadata for c in agent.calls] == [{}, {"marked": True}, {}]
    agent.register_feature(_Upper)
    agent.configure(model=[answer("again")])
    assert agent.ask("more").text == "again" and wrapped[-1] and agent.calls[-1].metadata == {"upper": True}
