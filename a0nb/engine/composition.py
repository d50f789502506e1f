"""From a loop pass's state to the exact chat messages and the same content as parts with
provenance: system sections (prompt files, extension), history items, extras keys, reattached skills."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from a0nb.engine.chat_messages import to_chat_messages
from a0nb.engine.history import OutputItem
from a0nb.engine.records import Part

if TYPE_CHECKING:
    from a0nb.engine.loop_data import LoopData
    from a0nb.engine.tokens import TokenCounter

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


def section(rendered: Any) -> Section:
    """Wrap a `Rendered` (or any text) so its provenance survives the `system_prompt` list."""
    return Section(str(getattr(rendered, "text", rendered)), getattr(rendered, "sources", ()))


def extras_text(ld: "LoopData") -> dict[str, Any]:
    """Persistent keys first; a temporary key with the same name replaces the value in place."""
    return {**ld.extras_persistent, **ld.extras_temporary}


def build(ld: "LoopData", extras_message: str | None, extras: dict[str, Any],
          counter: "TokenCounter", cache: dict[int, tuple[Any, int, Part]] | None = None) -> tuple[list[dict[str, Any]], list[Part]]:
    """`cache` keeps the Part of each (unchanged) history item between calls: history items are
    cached per message, so a long history costs a dict lookup per message per step."""
    system_text = "\n\n".join(ld.system)
    items = list(ld.history_output)
    if extras_message is not None:
        items.append(OutputItem(False, extras_message, (), "raw", "extras", "extras"))
    messages = to_chat_messages(items, system_text)
    parts = _system_parts(ld, counter) + _history_parts(ld, items, extras, counter, {} if cache is None else cache)
    if cache is not None and len(cache) > 4 * len(items) + 64:
        live = {id(i) for i in items}
        for key in [k for k in cache if k not in live]:
            del cache[key]
    return messages, parts


def _system_parts(ld: "LoopData", counter: "TokenCounter") -> list[Part]:
    parts = []
    for i, text in enumerate(ld.system):
        origin = ld.system_origin.get(i)
        ext = origin.name if origin is not None else ""
        sources = getattr(text, "sources", ())
        files = tuple(f"{s.name} ({s.label})" for s in sources)
        overrode = tuple(str(p) for s in sources[:1] for p in getattr(s, "overrode", ()))
        name = SECTION_NAMES.get(ext) or (sources[0].name if sources else ext or f"section {i + 1}")
        where = f"{origin.root_label}: {origin.path}" if origin is not None and origin.path else (origin.root_label if origin else "")
        source = (", ".join(files) + (f" via {ext}" if ext else "")) or (f"extension {ext}" if ext else "")
        if where:
            source += f" [{where}]"
        parts.append(Part("system", f"system: {name}", str(text), counter.count(str(text)), 0, source, files, ext,
                          "system", overrode))
    return parts


def _history_parts(ld: "LoopData", items: list[OutputItem], extras: dict[str, Any],
                   counter: "TokenCounter", cache: dict[int, tuple[Any, int, Part]]) -> list[Part]:
    parts: list[Part] = []
    index, role = 0, "system"
    for item in items:
        content = item.content
        if not content or (isinstance(content, str) and content.isspace()):
            continue
        item_role = "assistant" if item.ai else "user"
        if item_role != role:
            index, role = index + 1, item_role
        hit = cache.get(id(item))
        if hit is not None and hit[0] is item and hit[1] == index:
            parts.append(hit[2])
            continue
        before = len(parts)
        _item_parts(ld, item, content, index, extras, counter, parts)
        if item.kind != "extras" and len(parts) == before + 1:
            cache[id(item)] = (item, index, parts[-1])
    return parts


def _item_parts(ld: "LoopData", item: OutputItem, content: Any, index: int, extras: dict[str, Any],
                counter: "TokenCounter", parts: list[Part]) -> None:
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if item.kind == "extras":
        parts += _extras_parts(ld, extras, index, counter)
        return
    meta = item.metadata or {}
    skill = meta.get("skill_instructions") if isinstance(meta, dict) or hasattr(meta, "get") else None
    if skill and skill.get("source") == "skills_tool:reattach":
        parts.append(Part("skill", f"skill: {skill.get('name')}", text, counter.count(text), index,
                          f"skill {skill.get('name')} reattached after compaction ({skill.get('path')})",
                          (), "_65_include_loaded_skills", "reattached"))
        return
    summarised = item.origin != "raw"
    label = f"history: {item.where}" + (f" ({item.kind})" if item.kind not in ("other",) else "")
    parts.append(Part("history", label, text, counter.count(text), index,
                      f"{item.origin} {item.where}, messages {', '.join(item.message_ids) or '-'}", (), "",
                      "summarised" if summarised else "raw"))


def _extras_parts(ld: "LoopData", extras: dict[str, Any], index: int, counter: "TokenCounter") -> list[Part]:
    parts = []
    for key, value in extras.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        info, kind = ld.extras_origin.get(key, (None, "persistent" if key in ld.extras_persistent else "temporary"))
        if key in ld.extras_temporary:
            kind = "temporary"
        ext = info.name if info is not None else ""
        source = f"set by {info.label}" if info is not None else "set outside an extension"
        parts.append(Part("extras", f"extras: {key}", text, counter.count(text), index, source, (), ext, kind))
    return parts
