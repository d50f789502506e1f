"""From a loop pass's state to the exact chat messages and the same content as parts with
provenance: system sections (prompt files, extension), history items, extras keys, reattached skills."""
from __future__ import annotations

import json
from itertools import repeat
from typing import TYPE_CHECKING, Any, Sequence

from a0nb.engine.chat_messages import IncrementalMessages, common_prefix
from a0nb.engine.extras import _READ_PROMPT, _read_prompt_point
from a0nb.engine.history import OutputItem
from a0nb.engine.history_output import new_item
from a0nb.engine.records import Part, lazy_part, new_part

if TYPE_CHECKING:
    from a0nb.engine.loop_data import LoopData
    from a0nb.engine.tokens import TokenCounter

EXTRAS_PROMPT = "agent.context.extras.md"
SECTION_NAMES = {
    "_10_main_prompt": "main prompt", "_11_tools_prompt": "tools", "_13_secrets_prompt": "secrets",
    "_13_skills_prompt": "skills", "_14_project_prompt": "project",
}


class Section(str):
    """A system-prompt section that remembers the prompt files it was rendered from."""

    sources: tuple[Any, ...] = ()

    def __new__(cls, text: str, sources: Sequence[Any] = ()) -> "Section":
        obj = super().__new__(cls, text)
        obj.sources = tuple(sources)
        return obj

    # joined with `+` (Agent Zero's `_14_project_prompt` builds its section so), the files of both parts are kept
    def __add__(self, other: str) -> "Section":  # type: ignore[override]
        return Section(str.__add__(self, other), self.sources + tuple(getattr(other, "sources", ())))

    def __radd__(self, other: str) -> "Section":
        return Section(str.__add__(other, self), tuple(getattr(other, "sources", ())) + self.sources)


def section(rendered: Any) -> Section:
    """Wrap a `Rendered` (or any text) so its provenance survives the `system_prompt` list."""
    return Section(str(getattr(rendered, "text", rendered)), getattr(rendered, "sources", ()))


def extras_text(ld: "LoopData") -> dict[str, Any]:
    """Persistent keys first; a temporary key with the same name replaces the value in place."""
    return {**ld.extras_persistent, **ld.extras_temporary}


class Composer:
    """Builds each call's messages and parts, step after step: the unchanged leading history items keep
    the messages and parts they gave last time (parts are frozen; messages: see IncrementalMessages),
    so a step converts only what is new or changed. One per agent."""

    def __init__(self) -> None:
        self._messages = IncrementalMessages()
        self._items: list[OutputItem] = []  # the history items of the last call (extras excluded)
        self._parts: list[Part] = []  # their parts
        self._marks: list[tuple[int, int, str]] = []  # after each item: (parts so far, message index, role)
        self._system: list[tuple[str, tuple[Any, ...], Any, Part]] = []  # per section: (text, sources, origin, part)
        self._system_rule: Any = None  # the token counting rule those parts were counted with
        self._extras: dict[str, list[Any]] = {}  # per extras key: [value, origin, kind, counting rule, part]
        # the last call's sections (texts, their sources, origins), counting rule, system text and parts
        self._last_system: tuple[list[str], list[Any], dict[int, Any], Any, str, list[Part]] | None = None
        self._extra: OutputItem | None = None  # the last extras message's item
        self._extras_json: tuple[dict[str, Any], str] | None = None  # the last extras (a copy) and their JSON

    def extras_message(self, agent: Any, extras: dict[str, Any]) -> str | None:
        """The extras message (None without extras): `agent.read_prompt("agent.context.extras.md", extras=JSON)`.
        The JSON is made again only when the extras differ from the last call's, and the message is reused as
        `extras.extra_text` reuses a prompt: while the prompt files, the JSON and the project's variables are as
        they were and no extension hooks `read_prompt` (then it is read every time)."""
        if not extras:
            return None
        last = self._extras_json
        if last is None or last[0] != extras:
            last = self._extras_json = (extras.copy(), json.dumps(extras, ensure_ascii=False))
        text = last[1]
        point = _READ_PROMPT[0] if _READ_PROMPT else _read_prompt_point()
        hooked = agent.extensions.hooks.get(point)
        if hooked is None:  # (not known since the last change of the extensions: asked once)
            hooked = agent.extensions.hooked(point)
        if hooked:
            return agent.read_prompt(EXTRAS_PROMPT, extras=text)  # type: ignore[no-any-return]
        return agent.prompts.reuse(("extras message",), (text, agent.project.variables),  # type: ignore[no-any-return]
                                   lambda: agent.read_prompt(EXTRAS_PROMPT, extras=text))

    def build(self, ld: "LoopData", extras_message: str | None, extras: dict[str, Any],
              counter: "TokenCounter") -> tuple[list[dict[str, Any]], list[Part]]:
        history, items = list(ld.history_output), self._items
        k = len(items)  # (a step's usual case: every item of the last call leads, one comparison in C)
        prefix = 0 if self._system_rule is not counter.fn else k if history[:k] == items else \
            common_prefix(items, history)  # (a new counting rule: every part is counted anew)
        extra = self._extra
        if extras_message is None:
            extra = None
        elif extra is None or extra.content != extras_message:  # (the same text: the same item, items are frozen)
            extra = self._extra = new_item(False, extras_message, (), "raw", "extras", "extras")
        system_text, system_parts = self._system_parts(ld, counter)
        messages = self._messages.convert(history, system_text, prefix, extra)
        count, index, role = self._marks[prefix - 1] if prefix else (0, 0, "system")
        parts, marks = self._parts, self._marks
        del parts[count:], marks[prefix:]  # (kept in place: a step adds only what is new)
        self._items = []  # (until the parts below are all made)
        for item in history[prefix:]:  # (an empty item adds nothing; a change of role begins a message)
            content = item.content
            if content and not (isinstance(content, str) and content.isspace()):
                item_role = "assistant" if item.ai else "user"
                if item_role != role:
                    index, role = index + 1, item_role
                _item_parts(ld, item, content, index, extras, counter, parts)
            marks.append((len(parts), index, role))
        self._items = history
        tail: list[Part] = []
        if extras_message is not None and extras_message and not extras_message.isspace():
            tail = _extras_parts(ld, extras, index if role == "user" else index + 1, counter, self._extras)
        return messages, [*system_parts, *parts, *tail]  # (one list made, not two)

    def _system_parts(self, ld: "LoopData", counter: "TokenCounter") -> tuple[str, list[Part]]:
        """The system message's text and the sections' parts; a section equal to last call's (same text,
        files and extension) keeps its part, and when every one is, the step reuses both (same objects)."""
        texts, origins = ld.system, ld.system_origin
        all_sources = list(map(getattr, texts, repeat("sources"), repeat(())))  # (in C)
        last = self._last_system
        if last is not None and last[0] == texts and last[1] == all_sources and last[2] == origins \
                and last[3] is counter.fn:
            return last[4], last[5]
        old, new = self._system if self._system_rule is counter.fn else [], []
        self._system_rule = counter.fn
        for i, text in enumerate(ld.system):
            origin, sources = ld.system_origin.get(i), getattr(text, "sources", ())
            hit = old[i] if i < len(old) else None
            if hit is None or hit[0] != text or hit[1] != sources or not (hit[2] is origin or hit[2] == origin):
                hit = (text, sources, origin, _system_part(i, text, origin, counter))
            new.append(hit)
        self._system = new
        joined, parts = "\n\n".join(texts), [h[3] for h in new]
        self._last_system = (list(texts), all_sources, dict(origins), counter.fn, joined, parts)
        return joined, parts


def build(ld: "LoopData", extras_message: str | None, extras: dict[str, Any],
          counter: "TokenCounter") -> tuple[list[dict[str, Any]], list[Part]]:
    """One call's messages and parts, from scratch (`Composer` does the same step after step)."""
    return Composer().build(ld, extras_message, extras, counter)


def _system_part(i: int, text: str, origin: Any, counter: "TokenCounter") -> Part:
    ext = origin.name if origin is not None else ""
    sources = getattr(text, "sources", ())
    files = tuple(f"{s.name} ({s.label})" for s in sources)
    overrode = tuple(str(p) for s in sources[:1] for p in getattr(s, "overrode", ()))
    name = SECTION_NAMES.get(ext) or (sources[0].name if sources else ext or f"section {i + 1}")
    where = f"{origin.root_label}: {origin.path}" if origin is not None and origin.path else (origin.root_label if origin else "")
    source = (", ".join(files) + (f" via {ext}" if ext else "")) or (f"extension {ext}" if ext else "")
    if where:
        source += f" [{where}]"
    return Part("system", f"system: {name}", str(text), counter.count(str(text)), 0, source, files, ext,
                "system", overrode)


def _item_parts(ld: "LoopData", item: OutputItem, content: Any, index: int, extras: dict[str, Any],
                counter: "TokenCounter", parts: list[Part]) -> None:
    """Append the parts of one non-empty item (`content`) at message `index`."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    kind = item.kind
    if kind == "extras":
        parts += _extras_parts(ld, extras, index, counter)
        return
    meta = item.metadata
    skill = meta.get("skill_instructions") if meta and (isinstance(meta, dict) or hasattr(meta, "get")) else None
    if skill and skill.get("source") == "skills_tool:reattach":
        parts.append(new_part("skill", f"skill: {skill.get('name')}", text, counter.count(text), index,
                              f"skill {skill.get('name')} reattached after compaction ({skill.get('path')})",
                              (), "_65_include_loaded_skills", "reattached"))
        return
    where, ids = item.where, item.message_ids
    label = f"history: {where}" if kind == "other" else f"history: {where} ({kind})"
    ids_text = ids[0] if len(ids) == 1 and ids[0] else ", ".join(ids) or "-"
    parts.append(lazy_part("history", label, text, counter, index, f"{item.origin} {where}, messages {ids_text}",
                           (), "", "raw" if item.origin == "raw" else "summarised"))


def _extras_parts(ld: "LoopData", extras: dict[str, Any], index: int, counter: "TokenCounter",
                  last: dict[str, list[Any]] | None = None) -> list[Part]:
    """One part per extras key; with `last` (kept between calls), a key whose value (a string), origin and
    kind are as they were keeps its part (its count and source, when only its place moved)."""
    parts = []
    origins, temporary, fn = ld.extras_origin, ld.extras_temporary, counter.fn
    for key, value in extras.items():
        got = origins.get(key)
        info = got[0] if got is not None else None
        kind = "temporary" if key in temporary else got[1] if got is not None else \
            "persistent" if key in ld.extras_persistent else "temporary"
        hit = last.get(key) if last is not None else None
        if hit is not None and value.__class__ is str and hit[0] == value and hit[1] is info \
                and hit[2] == kind and hit[3] is fn:
            part = hit[4]
            if part.message_index != index:
                part = hit[4] = part.at(index)
            parts.append(part)
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        ext = info.name if info is not None else ""
        source = f"set by {info.label}" if info is not None else "set outside an extension"
        parts.append(new_part("extras", f"extras: {key}", text, counter.count(text), index, source, (), ext, kind))
        if last is not None:
            last[key] = [value, info, kind, fn, parts[-1]]
    return parts
