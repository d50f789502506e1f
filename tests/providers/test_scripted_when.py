"""Scripted replies with `when:`: one script answers requests in any order (the items of a batch)."""
from __future__ import annotations

import asyncio
from typing import Any

import pytest

from a0nb.errors import ConfigError, ModelError
from a0nb.providers.base import ModelConfig
from a0nb.providers.scripted import ScriptedProvider


def ask(provider: ScriptedProvider, text: str) -> str:
    messages = [{"role": "system", "content": "You answer about Oslo and Lima."}, {"role": "user", "content": text}]
    state = provider.init(ModelConfig(spec="scripted"))
    native, state = provider.initialize_request(messages, state)

    async def run() -> str:
        async for chunk in provider.stream(native, state):
            provider.process_chunk(chunk, state)
        return provider.finalize(state).content
    return asyncio.run(run())


def test_when_picks_the_reply_whose_regex_matches_in_any_order() -> None:
    provider = ScriptedProvider([{"when": "Oslo", "content": "Norway"}, {"when": r"Li\w+", "content": "Peru"},
                                 "anything else", {"when": "Oslo", "content": "Norway again"}])
    assert ask(provider, "Where is Lima?") == "Peru"
    assert ask(provider, "Where is Oslo?") == "Norway"
    assert ask(provider, "Where is Lima?") == "anything else"  # a reply without `when` fits every request
    assert ask(provider, "Where is Oslo?") == "Norway again"
    with pytest.raises(ModelError, match="ran out of replies"):
        ask(provider, "Where is Oslo?")


def test_the_system_prompt_is_not_matched_and_a_miss_is_explained() -> None:
    provider = ScriptedProvider([{"when": "Oslo", "content": "Norway"}])
    with pytest.raises(ModelError, match="none of the 1 unused replies .* has a `when` that matches"):
        ask(provider, "Where is Rome?")  # "Oslo" is only in the system prompt
    assert provider.remaining == 1


def test_a_bad_regex_names_the_reply() -> None:
    replies: list[Any] = ["ok", {"when": "(", "content": "x"}]
    with pytest.raises(ConfigError, match="reply 2 .* `when` is not a valid regex"):
        ScriptedProvider(replies)
