"""History compaction: Agent Zero's passes (truncate, attention-compress, bulk, merge) plus a real
termination guarantee: whatever the summariser does, the history ends within its token budget."""
from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal

from a0nb.errors import ConfigError
from a0nb.engine.history import Bulk, History, Message, Topic, is_raw
from a0nb.engine.tokens import TokenCounter

__all__ = ["Replacement", "CompactionEvent", "Summarize", "CompactionSettings", "CompactionTemplates", "compact",
           "truncate_value", "cut_text"]

Summarize = Callable[[str, str], Awaitable[str]]


@dataclass(frozen=True)
class Replacement:
    what: str          # e.g. "topic 2 messages 2-4", positions as they were when it happened
    by: str            # e.g. "summary (utility model)", "truncated", "dropped"
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True)
class CompactionEvent:
    tokens_before: int
    tokens_after: int
    budget: int
    mode: Literal["utility", "truncation"]
    replacements: tuple[Replacement, ...]


@dataclass
class CompactionSettings:
    ctx_length: int = 128_000
    history_share: float = 0.7      # budget L = ctx_length x history_share
    target_share: float = 0.8       # passes aim at T = 0.8 L ...
    current_share: float = 0.5      # ... split between the current topic,
    topics_share: float = 0.3       # the sealed topics
    bulks_share: float = 0.2        # and the bulks
    current_large: float = 0.25     # a current-topic message above 0.25 L is truncated
    topic_large: float = 0.06       # an older-topic message above 0.06 L is truncated
    current_keep: float = 0.65      # attention compression keeps 65 % of the current topic
    topic_keep: float = 0.0         # and only the first and last message of older topics
    topics_per_bulk: int = 3
    bulks_per_merge: int = 3
    truncate_to: float = 0.85       # a truncated message aims at this fraction of its threshold
    summary_max_chars: int = 2000   # a longer utility summary is cut, so a runaway summariser cannot grow history
    fallback_summary_chars: int = 800  # excerpt length of a summary made without a summariser
    max_passes: int = 10_000

    @property
    def budget(self) -> int:
        return max(0, int(self.ctx_length * self.history_share))

    def check(self) -> None:
        for name in ("current_share", "topics_share", "bulks_share", "target_share"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"compaction setting {name} must be > 0 (got {getattr(self, name)})")
        if not 0 <= self.current_keep < 1 or not 0 <= self.topic_keep < 1:
            raise ConfigError("compaction settings current_keep and topic_keep must be in [0, 1)")
        if self.topics_per_bulk < 1 or self.bulks_per_merge < 2:
            raise ConfigError("compaction needs topics_per_bulk >= 1 and bulks_per_merge >= 2")


def _default_message(texts: list[str]) -> str:
    body = "\n\n".join(f"--- message {i} ---\n{t}" for i, t in enumerate(texts, 1))
    return f"Condense these {len(texts)} messages into one paragraph:\n\n{body}"


def _default_marker(removed: int) -> str:
    return f"\n[... {removed} characters removed to save space ...]\n"


@dataclass(frozen=True)
class CompactionTemplates:
    """Texts compaction writes; the agent wires them to prompt files (fw.topic_summary.*, fw.msg_*)."""
    summary_system: str = ("You shorten the working memory of an AI agent. Reply with one plain paragraph of "
                           "about 100 words keeping facts, decisions, names, paths, numbers and open questions "
                           "the agent still needs. No preamble, headings or lists.")
    summary_message: Callable[[list[str]], str] = _default_message
    truncation_marker: Callable[[int], str] = _default_marker
    messages_summary: Callable[[str], Any] = field(default=lambda s: {"messages_summary": s})
    truncation_note: str = "[no summariser available: shortened excerpt]\n"
    raw_replaced: str = "[multimodal content removed to save space]"


def cut_text(text: str, keep: int, marker: Callable[[int], str]) -> str:
    """Head + marker + tail keeping about `keep` characters; unchanged when cutting would not save space."""
    keep = max(0, keep)
    removed = len(text) - keep
    note = marker(removed)
    if removed <= len(note):
        return text
    head = (keep + 1) // 2
    return text[:head] + note + text[len(text) - (keep - head):]


def truncate_value(value: Any, budget: int, marker: Callable[[int], str]) -> Any:
    """Shrink strings inside nested dicts/lists to about `budget` characters overall, keeping the structure:
    items are kept whole while they fit, the first that does not is cut, the rest shrink to markers."""
    if isinstance(value, str):
        return cut_text(value, budget, marker)
    if not isinstance(value, (dict, list)):
        return value
    if len(json.dumps(value, ensure_ascii=False)) <= budget:
        return value
    remaining = budget
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, child in value.items():
            out[key] = truncate_value(child, remaining, marker)
            remaining = max(0, remaining - len(json.dumps(out[key], ensure_ascii=False)))
        return out
    items: list[Any] = []
    for index, child in enumerate(value):
        if remaining <= 0:
            items.append(marker(len(json.dumps(value[index:], ensure_ascii=False))).strip())
            break
        items.append(truncate_value(child, remaining, marker))
        remaining -= len(json.dumps(items[-1], ensure_ascii=False))
    return items


def _span(what: str, first: int, last: int) -> str:
    return f"{what} {first}" if first == last else f"{what}s {first}-{last}"


class _Compaction:
    """One compaction run. Token totals per part are kept as running sums updated by each change."""

    def __init__(self, history: History, settings: CompactionSettings, summarize: Summarize | None,
                 counter: TokenCounter, templates: CompactionTemplates) -> None:
        self.h, self.s, self.c, self.t = history, settings, counter, templates
        self.summarize = summarize
        self.budget = settings.budget
        self.target = settings.target_share * self.budget
        self.replacements: list[Replacement] = []
        self.used_utility = False
        self.fresh: set[int] = set()      # bulks made in this run are not summarised again on their own
        self.clean_large = 0              # topics[:clean_large] hold no message to truncate
        self.clean_attention = 0          # topics[:clean_attention] cannot be attention-compressed
        self.topics_total = sum(t.tokens(counter) for t in history.topics)
        self.bulks_total = sum(b.tokens(counter) for b in history.bulks)

    def total(self) -> int:
        return self.bulks_total + self.topics_total + self.h.current.tokens(self.c)

    def note(self, what: str, by: str, before: int, after: int) -> None:
        self.replacements.append(Replacement(what, by, before, after))

    async def run(self) -> CompactionEvent | None:
        before = self.total()
        if before <= self.budget:
            return None
        previous = before
        for _ in range(self.s.max_passes):
            if not await self.one_pass():
                break
            now = self.total()
            if now >= previous:
                if self.summarize is None:
                    break
                self.summarize = None  # the summariser stopped helping: continue with deterministic excerpts
            previous = now
        self.enforce_budget()
        mode: Literal["utility", "truncation"] = "utility" if self.used_utility else "truncation"
        return CompactionEvent(before, self.total(), self.budget, mode, tuple(self.replacements))

    async def one_pass(self) -> bool:
        parts = [(self.h.current.tokens(self.c), self.s.current_share, self.compress_current),
                 (self.topics_total, self.s.topics_share, self.compress_topics),
                 (self.bulks_total, self.s.bulks_share, self.compress_bulks)]
        parts.sort(key=lambda p: p[0] / p[1], reverse=True)
        for tokens, share, compress in parts:
            if tokens > share * self.target and await compress():
                return True
        return False

    # -- summaries ---------------------------------------------------------------------------------------

    async def summary_of(self, texts: list[str]) -> tuple[str, str]:
        if self.summarize is None:
            excerpt = cut_text("\n".join(texts), self.s.fallback_summary_chars, self.t.truncation_marker)
            return self.t.truncation_note + excerpt, "excerpt (no summariser)"
        text = str(await self.summarize(self.t.summary_system, self.t.summary_message(texts))).strip()
        self.used_utility = True
        if len(text) > self.s.summary_max_chars:
            return cut_text(text, self.s.summary_max_chars, self.t.truncation_marker), "summary (utility model, cut)"
        return text, "summary (utility model)"

    # -- messages ----------------------------------------------------------------------------------------

    def truncate(self, message: Message, threshold: float, where: str) -> int:
        """Give a large message a shortened summary; returns the token delta."""
        before = message.tokens(self.c)
        if is_raw(message.content):
            message.summary = self.t.raw_replaced
        else:
            chars = int(len(message.text()) * threshold / before * self.s.truncate_to)
            while True:
                value = truncate_value(message.content, chars, self.t.truncation_marker)
                message.summary = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                if message.tokens(self.c) <= threshold or chars == 0:
                    break
                chars //= 2
        after = message.tokens(self.c)
        self.note(where, "truncated", before, after)
        return after - before

    def largest_candidate(self, messages: list[Message], threshold: float) -> int | None:
        best, best_tokens = None, threshold
        for i, m in enumerate(messages):
            if m.summary is None and m.tokens(self.c) > best_tokens:
                best, best_tokens = i, m.tokens(self.c)
        return best

    def attention_k(self, topic: Topic, keep: float) -> int:
        m = len(topic.messages) - 2
        if topic.summary is not None or m < 2:
            return 0
        k = m - math.floor(keep * m)
        if k == 1 and topic.messages[1].kind == "summary":
            return 0  # re-summarising a lone summary makes no progress
        return k

    async def attention(self, topic: Topic, k: int, where: str) -> int:
        """Replace messages 2..k+1 of a topic by one user-side summary message; returns the token delta."""
        chosen = topic.messages[1:1 + k]
        before = sum(m.tokens(self.c) for m in chosen)
        text, by = await self.summary_of([m.rendered() for m in chosen])
        message = Message(self.h.new_id("m"), False, self.t.messages_summary(text), "summary",
                          metadata={"summarises": [m.id for m in chosen]})
        start = next(i for i, m in enumerate(topic.messages) if m is chosen[0])
        topic.messages[start:start + k] = [message]
        after = message.tokens(self.c)
        self.note(f"{where} {_span('message', 2, k + 1)}", by, before, after)
        return after - before

    # -- the three parts ---------------------------------------------------------------------------------

    async def compress_current(self) -> bool:
        current = self.h.current
        index = self.largest_candidate(current.messages, self.s.current_large * self.budget)
        if index is not None:
            self.truncate(current.messages[index], self.s.current_large * self.budget,
                          f"current topic message {index + 1}")
            return True
        k = self.attention_k(current, self.s.current_keep)
        if k:
            await self.attention(current, k, "current topic")
            return True
        return False

    async def compress_topics(self) -> bool:
        topics = self.h.topics
        threshold = self.s.topic_large * self.budget
        while self.clean_large < len(topics):
            topic = topics[self.clean_large]
            index = None if topic.summary is not None else self.largest_candidate(topic.messages, threshold)
            if index is not None:
                where = f"topic {self.clean_large + 1} message {index + 1}"
                self.topics_total += self.truncate(topic.messages[index], threshold, where)
                return True
            self.clean_large += 1
        while self.clean_attention < len(topics):
            position = self.clean_attention
            k = self.attention_k(topics[position], self.s.topic_keep)
            self.clean_attention += 1
            if k:
                topic = topics[position]
                self.topics_total += await self.attention(topic, k, f"topic {position + 1}")
                if topic.messages[1].tokens(self.c) > threshold:  # the new summary must be looked at again
                    self.clean_large = min(self.clean_large, position)
                return True
        return await self.topics_to_bulk() if topics else False

    async def topics_to_bulk(self) -> bool:
        topics = self.h.topics
        count = self.s.topics_per_bulk if len(topics) >= self.s.topics_per_bulk else 1
        group = topics[:count]
        before = sum(t.tokens(self.c) for t in group)
        texts = [text for t in group for text in self.topic_texts(t)]
        text, by = await self.summary_of(texts)
        bulk = Bulk(list(group), text, self.h.new_id("b"))
        del topics[:count]
        self.h.bulks.append(bulk)
        self.fresh.add(id(bulk))
        after = bulk.tokens(self.c)
        self.topics_total -= before
        self.bulks_total += after
        self.clean_large = max(0, self.clean_large - count)
        self.clean_attention = max(0, self.clean_attention - count)
        self.note(_span("topic", 1, count), f"bulk {by}", before, after)
        return True

    @staticmethod
    def topic_texts(topic: Topic) -> list[str]:
        if topic.summary is not None:
            return [topic.summary]
        return [m.rendered() for m in topic.messages]

    async def compress_bulks(self) -> bool:
        bulks = self.h.bulks
        size = self.s.bulks_per_merge
        groups = [bulks[i:i + size] for i in range(0, len(bulks), size)]
        todo = [g for g in groups if len(g) > 1 or id(g[0]) not in self.fresh]
        if not todo:
            return False
        summaries = await asyncio.gather(*(self.summary_of([b.summary for b in g]) for g in todo))
        made = {id(g[0]): (g, s) for g, s in zip(todo, summaries)}
        merged: list[Bulk] = []
        for position, group in zip(range(1, len(bulks) + 1, size), groups):
            if id(group[0]) not in made:
                merged.extend(group)
                continue
            (text, by) = made[id(group[0])][1]
            bulk = Bulk(list(group), text, self.h.new_id("b"))
            self.fresh.add(id(bulk))
            merged.append(bulk)
            self.note(_span("bulk", position, position + len(group) - 1), f"bulk {by}",
                      sum(b.tokens(self.c) for b in group), bulk.tokens(self.c))
        bulks[:] = merged
        self.bulks_total = sum(b.tokens(self.c) for b in bulks)
        return True

    # -- the guarantee -----------------------------------------------------------------------------------

    def enforce_budget(self) -> None:
        """Drop the oldest bulks, then the oldest topics, then squeeze the current topic, until within budget."""
        allowed = self.budget - self.h.current.tokens(self.c)
        while self.bulks_total + self.topics_total > allowed and self.h.bulks:
            bulk = self.h.bulks.pop(0)
            tokens = bulk.tokens(self.c)
            self.bulks_total -= tokens
            self.note("bulk 1", "dropped", tokens, 0)
        while self.bulks_total + self.topics_total > allowed and self.h.topics:
            topic = self.h.topics.pop(0)
            tokens = topic.tokens(self.c)
            self.topics_total -= tokens
            self.note("topic 1", "dropped", tokens, 0)
        if self.total() > self.budget:
            self.squeeze_current()

    def squeeze_current(self) -> None:
        messages = self.h.current.messages
        excess = self.total() - self.budget
        count, freed = 0, 0
        while freed < excess and count < len(messages) - 2:  # middle messages go first, oldest first
            freed += messages[1 + count].tokens(self.c)
            count += 1
        if count:
            del messages[1:1 + count]
            self.note(f"current topic {_span('message', 2, count + 1)}", "dropped", freed, 0)
        while messages and self.total() > self.budget:
            index = max(range(len(messages)), key=lambda i: messages[i].tokens(self.c))
            message = messages[index]
            before = message.tokens(self.c)
            where = f"current topic message {index + 1}"
            if self.hard_truncate(message, before - (self.total() - self.budget)):
                self.note(where, "truncated to fit the budget", before, message.tokens(self.c))
            else:
                del messages[index]
                self.note(where, "dropped", before, 0)

    def hard_truncate(self, message: Message, target: int) -> bool:
        """Cut a message's text until it counts at most `target` tokens; False if even empty is too large."""
        if target <= 0:
            return False
        text = message.output_text()
        chars = int(len(text) * target / max(1, message.tokens(self.c)) * 0.9)
        while True:
            message.summary = cut_text(text, chars, self.t.truncation_marker) if chars else ""
            if message.tokens(self.c) <= target:
                return True
            if chars == 0:
                return False
            chars //= 2


async def compact(history: History, settings: CompactionSettings, summarize: Summarize | None,
                  counter: TokenCounter, templates: CompactionTemplates | None = None) -> CompactionEvent | None:
    """Shrink `history` in place to within settings.budget tokens; None when it already fits.

    Without `summarize`, summaries are deterministic excerpts (mode "truncation"). The history must not be
    changed by anyone else while this runs (the loop awaits it before building the next prompt)."""
    settings.check()
    run = _Compaction(history, settings, summarize, counter, templates or CompactionTemplates())
    return await run.run()
