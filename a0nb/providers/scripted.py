"""The scripted model: replies from a YAML list (or a Python list), streamed in small chunks so the
stream points fire. Ships in the package for tests, teaching and golden trajectories."""
from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter
from pathlib import Path
from typing import Any, AsyncIterator, Sequence

import yaml

from a0nb import safe_yaml
from a0nb.errors import ConfigError
from a0nb.providers.base import (ContextWindowExceeded, ModelConfig, ModelReply, StreamBroken, TransientModelError,
                   common_prefix, new_partial)
from a0nb.errors import ModelError

CHUNK = 8
_CONTENT = itemgetter("content")
FAULTS = ("rate_limit", "timeout", "server", "context_window", "auth", "break")


@dataclass(frozen=True)
class ScriptedReply:
    content: str
    reasoning: str = ""
    error: str | None = None        # one of FAULTS: raise instead of answering (fault injection)
    usage: dict[str, Any] | None = None
    when: str | None = None         # a regex: served only to a request whose conversation matches it
    delay: float = 0.0              # seconds between streamed chunks (to watch a reply arrive in a demo or test)

    def fits(self, conversation: str) -> bool:
        return self.when is None or re.search(self.when, conversation) is not None


def load_script(source: str | Path | Sequence[Any], base: Path | None = None) -> tuple[list[ScriptedReply], str]:
    """Replies and a label naming where they came from."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_absolute() and base is not None:
            path = base / path
        try:
            data = safe_yaml.load(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"scripted model: reply file {path} not found (use model='scripted:<file.yaml>' "
                              "with a path relative to the notebook folder)") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"scripted model: {path} is not valid YAML: {exc}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"scripted model: {path} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
                              "save it as UTF-8") from None
        label = str(path)
    else:
        data, label = list(source), "the list given as model="
    if not isinstance(data, list):
        raise ConfigError(f"scripted model: {label} must hold a YAML list of replies")
    # a text given again (a list repeated, `[...] * 50`) is served by the reply made for its first copy: a
    # ScriptedReply is immutable, and the script is the same list of equal replies, made and held once per text
    texts: dict[str, ScriptedReply] = {}
    return [(texts.get(item) or texts.setdefault(item, ScriptedReply(item))) if item.__class__ is str
            else _reply(item, label, i) for i, item in enumerate(data, 1)], label


def _reply(item: Any, label: str, i: int) -> ScriptedReply:
    if isinstance(item, str):
        return ScriptedReply(item)
    if isinstance(item, dict):
        if "content" not in item and "error" not in item:
            raise ConfigError(f"scripted model: reply {i} in {label} needs a `content` key")
        error = item.get("error")
        if error is not None and error not in FAULTS:
            raise ConfigError(f"scripted model: reply {i} in {label}: error must be one of {', '.join(FAULTS)}")
        try:
            delay = float(item.get("delay", 0) or 0)
        except (TypeError, ValueError):
            raise ConfigError(f"scripted model: reply {i} in {label}: delay must be a number of seconds") from None
        when = item.get("when")
        if when is not None:
            try:
                re.compile(str(when))
            except re.error as exc:
                raise ConfigError(f"scripted model: reply {i} in {label}: `when` is not a valid regex: {exc}") from None
        return ScriptedReply(str(item.get("content", "")), str(item.get("reasoning", "") or ""), error, item.get("usage"),
                             None if when is None else str(when), delay)
    raise ConfigError(f"scripted model: reply {i} in {label} must be a string or a mapping with `content`")


class ScriptedProvider:
    """Serves the replies in order; running out is a clear error naming the file. A reply with `when: REGEX`
    is skipped until a request's conversation (every message but the system prompt) matches it, so one
    script can answer the items of a batch (`Agent.map`) in any order."""

    name = "scripted"

    def tags(self, config: ModelConfig) -> frozenset[str]:
        return frozenset()  # no reasoning channel: the think-tags extension splits <think> off the text

    def __init__(self, source: str | Path | Sequence[Any], base: Path | None = None) -> None:
        self.replies, self.label = load_script(source, base)
        self.used: set[int] = set()
        self._free = 0  # every reply before this one is used
        self._when = [i for i, r in enumerate(self.replies) if r.when is not None]  # the replies that look
        self._sizes: tuple[list[Any], list[int]] = ([], [0])  # last request's contents, running character sums
        self._model = f"scripted:{Path(self.label).name}"

    @property
    def position(self) -> int:
        return len(self.used)

    @property
    def remaining(self) -> int:
        return len(self.replies) - len(self.used)

    def _next(self, messages: list[dict[str, Any]]) -> ScriptedReply:
        used, replies = self.used, self.replies
        if len(used) < self._free:  # replies handed back (the set edited): look from the start again
            self._free = 0
        while self._free in used:
            self._free += 1
        # the conversation is joined only when an unused reply has a `when` to match it against
        conversation = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") != "system") \
            if self._when and any(i not in used for i in self._when) else ""
        for i in range(self._free, len(replies)):
            if i not in used:
                reply = replies[i]
                if reply.when is None or reply.fits(conversation):
                    used.add(i)
                    return reply
        if self.remaining:
            raise ModelError(f"scripted model: none of the {self.remaining} unused replies in {self.label} has a "
                             "`when` that matches this request (check the regexes, or add a reply without `when`)")
        raise ModelError(f"scripted model ran out of replies: all {len(self.replies)} in {self.label} were used "
                         "(add more replies to the file, or call agent.reset())")

    def init(self, config: ModelConfig) -> dict[str, Any]:
        return {"config": config, "partial": new_partial(), "model": self._model}

    def initialize_request(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        state["request"] = {"messages": messages}
        return messages, state

    def chunks(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> list[tuple[str, str]] | None:
        """The chunks `stream` yields, all at once (for a driver with no one to show them to one by one); None
        when the reply streams in time (a `delay`) or breaks off midway: then `stream` serves the reply chosen here."""
        reply = self._start(messages, state)
        if reply.delay or reply.error:
            return None
        content, reasoning = reply.content, reply.reasoning
        chunks = [("c", content[i:i + CHUNK]) for i in range(0, len(content), CHUNK)]
        if reasoning:
            chunks[:0] = [("r", reasoning[i:i + CHUNK]) for i in range(0, len(reasoning), CHUNK)]
        return chunks

    def _start(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> ScriptedReply:
        reply = state["reply"] = self._next(messages)
        if reply.error and reply.error != "break":
            raise _fault(reply.error)
        return reply

    async def stream(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> AsyncIterator[tuple[str, str]]:
        reply = state.get("reply")  # (chosen already when `chunks` said None)
        if not isinstance(reply, ScriptedReply):
            reply = self._start(messages, state)
        for i in range(0, len(reply.reasoning), CHUNK):
            yield ("r", reply.reasoning[i:i + CHUNK])
        for i in range(0, len(reply.content), CHUNK):
            if reply.error == "break" and i >= len(reply.content) // 2:
                raise ConnectionResetError("scripted stream cut midway")
            if reply.delay:
                await asyncio.sleep(reply.delay)
            yield ("c", reply.content[i:i + CHUNK])

    def process_chunk(self, chunk: tuple[str, str], state: dict[str, Any]) -> tuple[str, str]:
        partial = state["partial"]
        partial["chunks"] += 1
        kind, text = chunk
        partial["reasoning" if kind == "r" else "content"].append(text)
        return (text, "") if kind == "r" else ("", text)

    def take(self, chunks: list[tuple[str, str]], state: dict[str, Any], closer: str) -> tuple[int, list[str], list[str]]:
        """`process_chunk` over the chunks in turn, up to and including the first whose response text holds
        `closer` ('': all of them), in one call: (chunks taken, their reasoning deltas, their response deltas).
        (A plain loop: in a step, where little stays in the CPU's caches, it beats a chain of C iterators.)"""
        if closer:
            for i, (kind, text) in enumerate(chunks):
                if closer in text and kind == "c":
                    chunks = chunks[:i + 1]
                    break
        partial = state["partial"]
        partial["chunks"] += len(chunks)
        content = [text for kind, text in chunks if kind == "c"]
        if len(content) == len(chunks):
            reasoning: list[str] = []
        else:
            reasoning = [text for kind, text in chunks if kind == "r"]
            partial["reasoning"] += reasoning
        partial["content"] += content
        return len(chunks), reasoning, content

    def finalize(self, state: dict[str, Any]) -> ModelReply:
        partial = state["partial"]
        reply: ScriptedReply = state["reply"]
        content, reasoning = "".join(partial["content"]), "".join(partial["reasoning"])
        usage = dict(reply.usage or {})
        if not usage:
            prompt_chars = self._prompt_chars(state["request"]["messages"])
            usage = {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(content) // 4 + len(reasoning) // 4}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return ModelReply(content=content, reasoning=reasoning, usage=usage, cost=0.0, model=state["model"],
                          chunks=partial["chunks"])


    def _prompt_chars(self, messages: list[dict[str, Any]]) -> int:
        """Characters of every message's content; only the messages after the part unchanged since the last
        request are measured (their contents are compared in C, the same text objects most of the time), and
        the running sums are cut back and extended in place."""
        try:
            contents = list(map(_CONTENT, messages))  # (in C: no Python call per message)
        except KeyError:
            contents = [m.get("content", "") for m in messages]
        old, sums = self._sizes
        n = common_prefix(old, contents)
        tail = contents[n:] if n else contents
        sizes = map(len, tail) if set(map(type, tail)) <= {str} else [  # (texts: measured in C)
            len(c) if c.__class__ is str else len(str(c)) for c in tail]
        base = sums[n]
        del sums[n:]
        sums += accumulate(sizes, initial=base)
        self._sizes = (contents, sums)
        return sums[-1]


def _fault(kind: str) -> ModelError:
    messages = {
        "rate_limit": "scripted fault: rate limit (429)",
        "timeout": "scripted fault: request timed out",
        "server": "scripted fault: server error (500)",
    }
    if kind in messages:
        return TransientModelError(messages[kind])
    if kind == "context_window":
        return ContextWindowExceeded("scripted fault: context window exceeded")
    return ModelError("scripted fault: authentication failed — set the provider's API key env var")


__all__ = ["ScriptedProvider", "ScriptedReply", "load_script", "StreamBroken"]
