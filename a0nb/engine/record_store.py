"""Call records over a long session, kept complete but not duplicated: a finished chat record shares with
the one before it every message and part that did not change (equal values, one object) and then holds its
message and part lists by reference, as the record before it plus what changed (`Shared`: a step adds only
what is new, not a list as long as the history); when asked, finished records are written whole to a JSONL
trace file and their messages and parts dropped from memory, read back from the file whenever something (the
inspector, an export) asks for them."""
from __future__ import annotations

import json
import os
import threading
import weakref
from operator import is_
from collections import OrderedDict
from pathlib import Path
from typing import Any

from a0nb.engine.chat_messages import common_prefix, fresh_message, fresh_messages
from a0nb.engine.records import CallRecord, Part
from a0nb.errors import A0Error
from a0nb.resources import user_home

__all__ = ["RecordStore", "share_unchanged", "Shared", "Spill", "SPILLED_FIELDS"]

SPILLED_FIELDS = ("messages", "parts")  # the fields that grow with the history; the rest stays in memory


def share_unchanged(previous: CallRecord | None, record: CallRecord, head: int | None = None) -> tuple[int | None, int]:
    """Make `record` hold the previous record's message dicts and parts wherever they are equal (the
    unchanged history and system prompt of a step), so a step adds only what is new; every other message
    becomes a copy of its own (what the caller was handed may be handed out again at the next call, and an
    edit then must not reach this record). Values are unchanged: every record still holds its whole input,
    only duplicates are merged. Returns how many leading messages it now holds as the previous record's
    objects (None when it could not share, or the system message changed) and how many system parts lead
    its parts; `head`: that count for `previous`, when known."""
    new = record.messages = list(record.messages)  # its own list: the caller keeps the one it was handed
    if previous is None or previous is record or "messages" not in previous.__dict__:
        new[:] = fresh_messages(new)
        return None, _end_counts(record.parts)[0]
    old = previous.messages
    size = len(new)
    n = min(len(old), size)
    equal = _prefix(old, new, len(old) - 1, n)  # (usually: all but the last message, whose end changed)
    shared: int | None = equal
    if equal == 0 and n:  # the system message (index 0) changed: the history after it may not have
        equal, shared = common_prefix(old[1:n], new[1:n]) + 1, None
    new[1:equal] = old[1:equal]
    if size:
        first = new[0]
        new[0] = old[0] if n and (old[0] is first or old[0] == first) else fresh_message(first)
    if equal < size:  # after the first change: copies of their own, or the previous record's where equal
        start = equal or 1
        new[start:] = fresh_messages(new[start:])
        for i in range(start + 1, n):
            if old[i] == new[i]:
                new[i] = old[i]
    # system parts lead a call's parts and extras end them; the history parts between are the composer's
    # own (one object per unchanged item already), so only the two ends are looked at: the system parts
    # when they are not the same objects already, the extras parts when they are at the same message (a
    # step that added history moved them all: none can be equal)
    parts, olds = record.parts, previous.parts
    old_head = _end_counts(olds)[0] if head is None else head
    if len(parts) >= old_head and all(map(is_, parts[:old_head], olds[:old_head])) \
            and (len(parts) == old_head or parts[old_head].kind != "system"):
        head, todo = old_head, []
    else:
        head = _end_counts(parts)[0]
        todo = [*range(head)]
    old_tail = 0
    if parts and olds and parts[-1].kind == "extras" and parts[-1].message_index == olds[-1].message_index:
        tail, old_tail = _end_counts(parts, head)[1], _end_counts(olds, old_head)[1]
        if tail and old_tail:
            todo += range(len(parts) - tail, len(parts))
    if todo:
        by_key = {(p.kind, p.label): p for p in [*olds[:old_head], *olds[len(olds) - old_tail:]]}
        for i in todo:
            part = parts[i]
            same = by_key.get((part.kind, part.label))
            if same is not None and same is not part and same == part:
                parts[i] = same
    return shared, head


def _prefix(old: list[Any], new: list[Any], guess: int, limit: int) -> int:
    """`common_prefix(old, new)` (`limit`: the shorter's length), answered by one comparison in C when it is
    `guess` (a step's usual answer)."""
    if 0 < guess < limit and old[:guess] == new[:guess] and not (old[guess] is new[guess] or old[guess] == new[guess]):
        return guess
    return common_prefix(old, new)


def _parts_prefix(old: list[Part], new: list[Part]) -> int:
    """`common_prefix(old, new)` of two calls' parts, answered by one comparison in C in a step's usual case:
    everything up to the old extras parts is the same (the extras moved, new history parts took their place)."""
    limit, g = min(len(old), len(new)), len(old)
    while g and old[g - 1].kind == "extras":
        g -= 1
    if g <= limit and old[:g] == new[:g]:
        if g == limit or (old[g] is not new[g] and old[g].kind != new[g].kind):  # (parts of two kinds differ)
            return g
    return common_prefix(old, new)


def _end_counts(parts: list[Part], head: int | None = None) -> tuple[int, int]:
    """How many system parts lead and how many extras parts end a call's parts (`head`: the first, if known)."""
    n = len(parts)
    if head is None:
        head = 0
        while head < n and parts[head].kind == "system":
            head += 1
    tail = n
    while tail > head and parts[tail - 1].kind == "extras":
        tail -= 1
    return head, n - tail


class Spill:
    """Writes finished records to `path` (one `CallRecord.to_dict()` per line: a complete trace that
    `import_jsonl` reads back) and keeps in memory only the newest `keep` records' messages and parts.
    A spilled record reads them back from the file on access (the last few reads are cached)."""

    def __init__(self, path: Path | str, keep: int = 50, cached: int = 4) -> None:
        if keep < 1:
            raise A0Error(f"spill keep={keep}: keep at least the newest record in memory (keep >= 1)")
        self.path = Path(path)
        self.keep = keep
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(b"")  # a new trace: offsets in an older file would point at other records
        self._pending: list[CallRecord] = []
        self._cache: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self._cached = cached
        self._lock = threading.Lock()
        self.spilled = 0

    def add(self, record: CallRecord) -> None:
        """A finished record: held whole until `keep` newer ones are finished, then spilled."""
        self._pending.append(record)
        while len(self._pending) > self.keep:
            self._write(self._pending.pop(0))

    def stop(self) -> None:
        """Spill nothing more: the records still pending stay in memory, whole; spilled ones stay readable."""
        self._pending.clear()

    def flush(self) -> None:
        """Spill every record still held (e.g. before closing a long session)."""
        while self._pending:
            self._write(self._pending.pop(0))

    def _write(self, record: CallRecord) -> None:
        held = record.__dict__.get("_fields_from")
        if "messages" not in record.__dict__ and (held is None or held[0] is self):
            return
        line = json.dumps(record.to_dict(), ensure_ascii=False, default=str)
        back = json.loads(line)
        if _parts(back["parts"]) != record.parts or back["messages"] != record.messages:
            return  # a value JSON cannot hold exactly (bytes, objects): this record stays in memory, whole
        with self._lock, self.path.open("ab") as f:
            offset = f.tell()
            f.write(line.encode("utf-8") + b"\n")
        for name in SPILLED_FIELDS:
            record.__dict__.pop(name, None)
        record.__dict__["_fields_from"] = (self, offset)
        self.spilled += 1

    def load(self, offset: int) -> dict[str, Any]:
        """The spilled fields of the record written at `offset`, as the record held them."""
        with self._lock:
            hit = self._cache.get(offset)
            if hit is not None:
                self._cache.move_to_end(offset)
                return hit
            try:
                with self.path.open("rb") as f:
                    f.seek(offset)
                    line = f.readline()
            except OSError as exc:
                raise A0Error(f"the spilled call records in {self.path} cannot be read ({exc}); the file must stay "
                              "in place while the session runs") from None
            data = json.loads(line)
            fields = {"messages": data["messages"], "parts": _parts(data["parts"])}
            self._cache[offset] = fields
            if len(self._cache) > self._cached:
                self._cache.popitem(last=False)
            return fields


def _reference(base: list[Any], new: list[Any], n: int | None = None) -> tuple[list[Any], int, list[Any]]:
    """`new` as (head, n, tail): head + base[len(head):len(head) + n] + tail, with the longest run of base
    items found in C (the unchanged history of a step; head is the system message when only it changed);
    `n`: how many leading items are equal, when known."""
    if n is None:
        n = common_prefix(base, new)
    if n or not new or not base:
        return [], n, new[n:]
    n = common_prefix(base[1:], new[1:])
    return new[:1], n, new[1 + n:]


class Shared:
    """Finished records' messages and parts held by reference: a record's lists are the lists of the record
    before it with a changed head and a new tail (`_reference`), rebuilt on access; every `every`-th record
    keeps its lists whole, so rebuilding one walks back at most that many records. The last few rebuilt are
    kept (the inspector reads a record's messages and parts together, and consecutive records in a row)."""

    def __init__(self, every: int = 32, cached: int = 4) -> None:
        self.every = every
        self._cache: OrderedDict[int, tuple[tuple[Any, ...], dict[str, Any]]] = OrderedDict()
        self._cached = cached
        self._lock = threading.Lock()

    def hold(self, record: CallRecord, base: CallRecord, base_fields: dict[str, Any], shared: int | None = None) -> None:
        """Hold `record`'s messages and parts as `base`'s (given whole as `base_fields`) plus what changed;
        `shared`: how many leading messages `record` holds as `base`'s objects (share_unchanged's answer)."""
        d = record.__dict__
        if "messages" not in d or "parts" not in d or "_fields_from" in d:
            return
        messages = d["messages"]
        parts = d["parts"]
        key = (base, _reference(base_fields["messages"], messages) if shared is None else ([], shared, messages[shared:]),
               _reference(base_fields["parts"], parts, _parts_prefix(base_fields["parts"], parts)))
        del d["messages"], d["parts"]
        d["_fields_from"] = (self, key)

    def load(self, key: tuple[Any, ...]) -> dict[str, Any]:
        base, messages, parts = key
        with self._lock:
            hit = self._cache.get(id(key))
            if hit is not None:
                self._cache.move_to_end(id(key))
                return hit[1]
        whole = {"messages": base.messages, "parts": base.parts}  # (the base may itself be held here)
        fields = {}
        for name, (head, n, tail) in (("messages", messages), ("parts", parts)):
            fields[name] = [*head, *whole[name][len(head):len(head) + n], *tail]
        with self._lock:
            self._cache[id(key)] = (key, fields)
            if len(self._cache) > self._cached:
                self._cache.popitem(last=False)
        return fields


def _parts(raw: list[dict[str, Any]]) -> list[Part]:
    return [Part(**{**p, "files": tuple(p.get("files", ())), "overrode": tuple(p.get("overrode", ()))}) for p in raw]


class RecordStore:
    """Held by an agent's model calls (`agent.models.store`): settles each finished chat record (shares what
    it has in common with the one before, then holds the one before by reference) and, after
    `spill_to(path)`, spills older records to `path`."""

    def __init__(self) -> None:
        self.previous: CallRecord | None = None
        self.spill: Spill | None = None
        self.shared = Shared()
        self._before: tuple[CallRecord, dict[str, Any]] | None = None  # the record before `previous`, whole
        self._shared: int | None = None  # how many leading messages `previous` holds as `_before`'s objects
        self._automatic: Spill | None = None  # the spill the record_keep setting started
        self._finished = 0
        self._head: int | None = None  # how many system parts lead `previous`'s parts

    def spill_to(self, path: Path | str, keep: int = 50) -> Spill:
        """From now on keep only the newest `keep` finished records' messages and parts in memory; the
        others are written to `path` (JSONL, one whole record a line) and read back when asked for."""
        if self.spill is not None:
            self.spill.flush()
        self.spill = Spill(path, keep)
        return self.spill

    def finish(self, record: CallRecord, keep: int = 0) -> None:
        """Settle a finished record; `keep` (the record_keep setting) > 0 spills all but the newest `keep`
        to a trace file in $A0NB_HOME/traces, removed when the process ends."""
        if keep > 0 and self.spill is None:
            self.spill = Spill(user_home() / "traces" / f"calls-{os.getpid()}-{id(self):x}.jsonl", keep)
            self._automatic = self.spill
            weakref.finalize(self.spill, self.spill.path.unlink, missing_ok=True)
        elif self.spill is not None and self.spill is self._automatic:
            if keep > 0:
                self.spill.keep = keep
            else:  # turned off: what is spilled stays readable; nothing more is
                self.spill.stop()
                self.spill = None
        previous = self.previous
        shared, self._head = share_unchanged(previous, record, self._head if previous is not None else None)
        if previous is not None and "messages" in previous.__dict__ and "parts" in previous.__dict__:
            whole = {"messages": previous.messages, "parts": previous.parts}
            # `previous` is settled now (nothing later is compared with its lists but through `whole`)
            # (records that will be spilled stay whole until then: writing one never reads another back)
            if self._before is not None and self._finished % self.shared.every and self.spill is None:
                self.shared.hold(previous, *self._before, self._shared)
            self._before = (previous, whole)
        self._shared = shared  # (between `previous` and `record`: the next finish holds `record` with it)
        self._finished += 1
        self.previous = record
        if self.spill is not None:
            self.spill.add(record)

    def clear(self) -> None:
        """The agent forgot its records (reset): nothing older is shared with or spilled any more."""
        self.previous = None
        self._before = self._shared = None
        if self.spill is not None:
            self.spill.stop()
