"""The caches' bookkeeping for history (`history`): version stamps on messages and the memos built over a
list of messages (token totals, output items), with the check that a memo still covers a list. A message's
stamp is replaced when it is changed, and `EDITS` counts such changes process-wide, so a memo made when no
stamped message has changed since is checked with one list comparison."""
from __future__ import annotations

from operator import attrgetter, is_
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from a0nb.engine.history import Message
    from a0nb.engine.history_output import OutputItem

__all__ = ["EDITS", "Memo", "covers", "extend", "stamp"]

_STAMP = attrgetter("_v")
EDITS = [0]  # how many times a stamped message (one some cache covers) was changed, process-wide


def stamp(message: Message) -> object:
    v = message._v
    if v is None:
        v = object()
        object.__setattr__(message, "_v", v)
    return v


class Memo:
    """A cache over a list of messages: the messages it was built from (in order), their stamps, the edit
    count then, and what it holds (output items and which of them hold images, or a token total). Never
    edited: a step that adds messages makes a new one."""
    __slots__ = ("key", "msgs", "stamps", "edits", "items", "images", "total")

    def __init__(self, key: Any, msgs: list[Message], stamps: list[object], edits: int,
                 items: list[OutputItem] | None = None, images: list[int] | None = None, total: int = 0) -> None:
        self.key, self.msgs, self.stamps, self.edits = key, msgs, stamps, edits
        self.items, self.images, self.total = items or [], images or [], total


def covers(memo: Memo, messages: list[Message]) -> bool:
    """The memo's messages lead `messages`, each unchanged since. When no stamped message changed anywhere
    since the memo was made, one list comparison tells (the same objects in the same places, in C);
    otherwise each message's stamp is checked (identity checks, in C)."""
    n = len(memo.msgs)
    if len(messages) < n:
        return False
    if memo.edits == EDITS[0]:
        return (messages if len(messages) == n else messages[:n]) == memo.msgs
    # (stamps first: map stops when they run out, before reading a message past them)
    return all(map(is_, memo.stamps, map(_STAMP, messages)))


def extend(memo: Memo | None, key: Any, messages: list[Message], edits: int) -> tuple[Memo, list[Message]]:
    """The memo to build on (or an empty one) and the messages it does not cover yet."""
    if memo is not None and memo.key == key and covers(memo, messages):
        return memo, messages[len(memo.msgs):]
    return Memo(key, [], [], edits), messages
