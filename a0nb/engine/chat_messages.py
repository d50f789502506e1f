"""History as the model sees it: output items turned into OpenAI-shaped chat messages (AI ->
assistant, everything else -> user, consecutive same roles merged), the hottest loop of a step."""
from __future__ import annotations

from bisect import bisect_left
from itertools import repeat
from typing import Any, Sequence

from a0nb.engine.history import OutputItem
from a0nb.providers.base import common_prefix

__all__ = ["to_chat_messages", "IncrementalMessages", "common_prefix", "fresh_message", "fresh_messages"]


def _parts(content: str | list) -> list:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _merge(a: str | list, b: str | list) -> str | list:
    if isinstance(a, str) and isinstance(b, str):
        return f"{a}\n{b}"
    return _parts(a) + _parts(b)


def _is_empty(content: str | list) -> bool:
    # isspace() stops at the first other character; strip() would copy the whole text on every step
    return not content or (isinstance(content, str) and content.isspace())


def to_chat_messages(items: Sequence[OutputItem], system: str | None = None) -> list[dict[str, Any]]:
    """OpenAI-shaped messages: AI -> assistant, everything else -> user, consecutive same roles merged."""
    result: list[dict[str, Any]] = []
    if system is not None:  # providers reject empty content
        result.append({"role": "system", "content": "empty" if _is_empty(system) else system})
    last: dict[str, Any] | None = result[-1] if result else None
    for item in items:  # the hottest loop of a step at long histories: kept free of calls
        content = item.content
        if not content:
            continue
        if content.__class__ is str:
            if content.isspace():
                continue
        else:
            content = list(content)
        role = "assistant" if item.ai else "user"
        if last is not None and last["role"] == role:
            last["content"] = _merge(last["content"], content)  # non-empty parts: never empty
        else:
            last = {"role": role, "content": content}
            result.append(last)
    return result


def fresh_message(message: Any) -> Any:
    """A message dict of its own (and its list of parts, if any): what a caller may edit without reaching
    the dict it was made from."""
    if message.__class__ is not dict:
        return message
    content = message.get("content")
    return {**message, "content": list(content)} if content.__class__ is list else message.copy()


def fresh_messages(messages: list[Any]) -> list[Any]:
    """`fresh_message` of each: {role, content} dicts of text (the usual request) copied in C (the few of a
    step looked at one by one: the checks in C cost more than that for them)."""
    if len(messages) < 8:
        for m in messages:
            if m.__class__ is not dict or m.get("content").__class__ is list:
                return list(map(fresh_message, messages))
        return list(map(dict.copy, messages))
    if set(map(type, messages)) <= {dict} and list not in set(map(type, map(dict.get, messages, repeat("content")))):
        return list(map(dict.copy, messages))
    return list(map(fresh_message, messages))


class IncrementalMessages:
    """`to_chat_messages` for a history that changes at its end: the messages made only of unchanged
    leading items are kept from the last call, the rest is converted again. A caller's edits never reach
    the cache: it gets dicts (and lists of parts) of its own, made once and handed out again at later calls
    while they still equal the cache's (one comparison in C, no copy per message per call); one a caller
    edited is made afresh. Records keep their own copies (record_store.share_unchanged), so an edit at a
    later call cannot reach an older record either."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._items: list[OutputItem] = []
        self._done: list[dict[str, Any]] = []  # each converted message (system excluded): never handed out
        self._handed: list[dict[str, Any]] = []  # a caller's copy of each (while it equals it)
        self._starts: list[int] = []  # index of the first item of each message
        self._kept = 0  # how many leading messages the last update left as they were

    def convert(self, items: Sequence[OutputItem], system: str | None, prefix: int | None = None,
                extra: OutputItem | None = None) -> list[dict[str, Any]]:
        """The messages of `items` (then `extra`, if given: as if it ended `items`); `prefix`: how many leading
        items are as they were at the last call (found here when not given). The cache holds the items'
        messages only: the extra (the extras message, new at every step) is merged into the result alone, so
        the message it ended stays as it is for the next call."""
        try:
            done = self._update(items, prefix)
            handed = self._handed
            del handed[self._kept:]
            if handed != (done if len(done) == len(handed) else done[:len(handed)]):  # a caller edited its copy
                handed[:] = [h if h == d else fresh_message(d) for h, d in zip(handed, done)]
            handed += fresh_messages(done[len(handed):])
        except BaseException:
            self._reset()  # half updated: the next call converts everything
            raise
        result: list[dict[str, Any]] = []
        if system is not None:  # providers reject empty content
            result.append({"role": "system", "content": "empty" if not system or system.isspace() else system})
        result += handed
        content = extra.content if extra is not None else None
        if content and not (content.__class__ is str and content.isspace()):
            role = "assistant" if extra.ai else "user"  # type: ignore[union-attr]
            if done and done[-1]["role"] == role:  # (the caller's copy of that message is not handed out)
                result[-1] = {"role": role, "content": _merge(done[-1]["content"], content)}
            else:
                result.append({"role": role, "content": content if content.__class__ is str else list(content)})
        return result

    def _update(self, items: Sequence[OutputItem], prefix: int | None) -> list[dict[str, Any]]:
        p = common_prefix(self._items, items) if prefix is None else prefix
        done, starts = self._done, self._starts
        k = bisect_left(starts, p)  # messages that began inside the unchanged prefix
        keep = max(0, k - 1)  # the last of them may still merge with what follows
        if k and (starts[k] if k < len(starts) else len(self._items)) <= p:  # it is made of unchanged items only:
            role = done[k - 1]["role"]  # it stays unless the next message-making item has its role
            for item in items[p:]:
                content = item.content
                if content and not (content.__class__ is str and content.isspace()):
                    keep += ("assistant" if item.ai else "user") != role
                    break
            else:
                keep = k
        start = p if keep == k else starts[keep] if k > 0 else 0
        del done[keep:], starts[keep:]
        self._kept = keep
        last_role = done[-1]["role"] if done else None
        for i, item in enumerate(items[start:], start):  # only the items new or changed since the last call
            content = item.content
            if not content or (content.__class__ is str and content.isspace()):
                continue
            role = "assistant" if item.ai else "user"
            if role == last_role:
                done[-1] = {"role": role, "content": _merge(done[-1]["content"], content)}
            else:
                done.append({"role": role, "content": content})
                starts.append(i)
                last_role = role
        # (a caller that gives `prefix` keeps its `items` as they are: held, not copied)
        self._items = items if prefix is not None and items.__class__ is list else list(items)  # type: ignore[assignment]
        return done
