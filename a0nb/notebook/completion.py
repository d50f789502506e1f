"""Tab completion and Shift+Tab help for the agent's words: `%a0` subcommands, profile, skill, plugin,
tool and extension-point names, `@file` paths, plus feature plugins' `get_completions`."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from a0nb.notebook.commands import SUBCOMMANDS

MATCHER_ID = "a0nb.completion"
_WORD = re.compile(r"[\w\-./:@~]*$")
_LINE_MAGIC = re.compile(r"^\s*%a0(\s|$)")
_MAX_PATHS = 200


@dataclass(frozen=True)
class Context:
    """Where the cursor is: `kind` is `subcommand`, `argument` (of `sub`) or `message`."""

    kind: str
    sub: str
    word: str
    before: str  # the text of the current line up to the word


def candidates(ctx: Context, agent_fn: Callable[[], Any], subcommands: Iterable[str]) -> list[str]:
    """Full words (not only the typed suffix) that complete `ctx.word`."""
    word = ctx.word
    if ctx.kind == "subcommand":
        return [s for s in subcommands if s.startswith(word)]
    agent = agent_fn()
    if ctx.kind == "argument":
        return [n for n in _argument_names(ctx.sub, agent, word) if n.startswith(word)]
    if word.startswith("@"):
        return ["@" + p for p in file_paths(agent.workdir, word[1:])]
    if ":" in word:
        tool, _, method = word.partition(":")
        return [f"{tool}:{m}" for m in _methods(tool) if m.startswith(method)]
    previous = ctx.before.split()[-1:] if ctx.before.strip() else []
    if previous and previous[0].endswith(":load"):
        return [s for s in sorted(agent.skills()) if s.startswith(word)]
    if not word:
        return []
    names = sorted(set(agent.skills()) | set(agent.tools.available()))
    return [n for n in names if n.startswith(word)]


def _argument_names(sub: str, agent: Any, word: str) -> list[str]:
    if sub == "profile":
        return sorted(agent.profiles())
    if sub == "extensions":
        from a0nb.files.points import POINTS
        return sorted(POINTS)
    if sub in ("replay", "record"):
        return [p for p in file_paths(agent.workdir, word) if p.endswith((".yaml", ".yml", ".jsonl", "/"))]
    if sub == "chat":
        return ["on", "off"]
    if sub == "plugins":
        return ["enable", "disable", "config"]
    if sub == "plugins name":
        return [p.name for p in agent.hierarchy.plugins]
    if sub.startswith("plugins field "):
        from a0nb.notebook.plugin_admin import PluginAdmin
        try:
            values, element = PluginAdmin(agent).config(sub[len("plugins field "):])
        except Exception:  # an unknown plugin name: nothing to offer
            return []
        from a0nb.inspector.ui_elements import config_fields
        return [f"{f.name}=" for f in config_fields(element, values)]
    return []


def _plugins_context(parts: list[str], word: str, head: str) -> Context | None:
    """`%a0 plugins enable|disable|config NAME` completes plugin names; after `config NAME`, `key=`."""
    if len(parts) == 3 and parts[2] in ("enable", "disable", "config"):
        return Context("argument", "plugins name", word, head)
    if len(parts) >= 4 and parts[2] == "config" and "=" not in word:
        return Context("argument", f"plugins field {parts[3]}", word, head)
    return None


def _methods(tool: str) -> tuple[str, ...]:
    # only the bundled skills tool has well-known methods; other tools take free-form ones
    return ("list", "search", "load", "read_file") if tool == "skills_tool" else ()


def file_paths(workdir: Path, partial: str) -> list[str]:
    """Paths under the notebook folder starting with `partial` (folders end with `/`)."""
    folder, _, stem = partial.rpartition("/")
    base = (Path(workdir) / folder) if folder else Path(workdir)
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for e in entries:
        if e.name.startswith(".") and not stem.startswith("."):
            continue
        if e.name.startswith(stem):
            rel = f"{folder}/{e.name}" if folder else e.name
            out.append(rel + "/" if e.is_dir() else rel)
        if len(out) >= _MAX_PATHS:
            break
    return out


def complete(magics: Any, full_text: str, cursor_line: int, cursor_pos: int, token: str) -> list[str]:
    """Completion texts for `token` (the part IPython replaces), or [] outside an a0 context."""
    lines = full_text.split("\n")
    line = lines[cursor_line] if cursor_line < len(lines) else ""
    before = line[:cursor_pos]
    ctx = locate(full_text, cursor_line, line, before, magics.chat.on)
    if ctx is None:
        return []
    words = candidates(ctx, lambda: magics.agent, SUBCOMMANDS)
    if ctx.kind == "message":
        words += _feature_words(magics, full_text, cursor_line, cursor_pos, ctx)
    cut = len(ctx.word) - len(token) if ctx.word.endswith(token) else 0
    seen: dict[str, None] = {}
    for w in words:
        if w.startswith(ctx.word[:cut]):
            seen.setdefault(w[cut:], None)
    return list(seen)


def locate(full_text: str, cursor_line: int, line: str, before: str, chat_on: bool) -> Context | None:
    """The a0 context of the cursor, or None when the cell is not for the agent."""
    word = _WORD.search(before).group(0)  # type: ignore[union-attr]
    head = before[: len(before) - len(word)]
    first = next((i for i, l in enumerate(full_text.split("\n")) if l.strip()), 0)
    cell_head = full_text.split("\n")[first].strip() if full_text.strip() else ""
    if cell_head.startswith("%%a0"):
        return None if cursor_line <= first else Context("message", "", word, head)
    if _LINE_MAGIC.match(line):
        parts = head.split()
        if len(parts) <= 1:
            return Context("subcommand", "", word, head)
        if parts[1] == "ask":
            return Context("message", "ask", word, head)
        if parts[1] == "plugins" and len(parts) >= 3:
            return _plugins_context(parts, word, head)
        return Context("argument", parts[1], word, head) if len(parts) == 2 else None
    if chat_on and cell_head and not cell_head.startswith(("%", "!")):
        return Context("message", "", word, head)
    return None


def _feature_words(magics: Any, text: str, cursor_line: int, cursor_pos: int, ctx: Context) -> list[str]:
    from a0nb.files.features import features
    agent = magics.agent
    offset = sum(len(l) + 1 for l in text.split("\n")[:cursor_line]) + cursor_pos
    info = {"agent": agent, "word": ctx.word, "line": cursor_line, "column": cursor_pos}
    out: list[str] = []
    for feature in features(agent):
        out += [w for w in feature.completions(text, offset, info) if w.startswith(ctx.word)]
    return out


# -- IPython glue ----------------------------------------------------------------------------------

def install(shell: Any, magics: Any) -> Callable[[], None]:
    """Register the matcher and the inspect wrapper; returns the function that removes both."""
    remove_matcher = _install_matcher(shell, magics)
    remove_inspect = _install_inspect(shell, magics)

    def uninstall() -> None:
        remove_matcher()
        remove_inspect()
    return uninstall


def _install_matcher(shell: Any, magics: Any) -> Callable[[], None]:
    completer = getattr(shell, "Completer", None)
    if completer is None:
        return lambda: None
    try:
        from IPython.core.completer import SimpleCompletion, context_matcher
    except ImportError:  # IPython < 8.6: the old string hook, keyed on the magic's name
        return _install_hook(shell, magics)

    @context_matcher(identifier=MATCHER_ID, priority=10)
    def a0nb_matcher(context: Any) -> dict[str, Any]:
        texts = complete(magics, context.full_text, context.cursor_line, context.cursor_position, context.token)
        return {"completions": [SimpleCompletion(t, type="a0") for t in texts], "suppress": bool(texts)}

    _remove_matchers(completer)
    completer.custom_matchers.append(a0nb_matcher)
    return lambda: _remove_matchers(completer)


def _remove_matchers(completer: Any) -> None:
    completer.custom_matchers[:] = [m for m in completer.custom_matchers
                                    if getattr(m, "matcher_identifier", None) != MATCHER_ID]


def _install_hook(shell: Any, magics: Any) -> Callable[[], None]:
    def hook(_self: Any, event: Any) -> list[str]:
        line = getattr(event, "line", "")
        return complete(magics, line, 0, len(line), getattr(event, "symbol", ""))
    shell.set_hook("complete_command", hook, str_key="%a0")
    return lambda: None  # IPython offers no way to remove a str_key hook


def _install_inspect(shell: Any, magics: Any) -> Callable[[], None]:
    original = shell.object_inspect_mime  # the bound method (or an older wrapper, replaced below)
    original = getattr(original, "__wrapped_inspect__", original)

    def object_inspect_mime(oname: str, detail_level: int = 0, **kwargs: Any) -> dict[str, str]:
        try:
            return original(oname, detail_level=detail_level, **kwargs)
        except KeyError:
            # only names that are not Python objects reach here: Python always wins
            bundle = describe_subcommand(oname)
            if bundle is None:
                bundle = describe_name(magics.agent, oname)
            if bundle is None:
                raise
            return bundle

    object_inspect_mime.__wrapped_inspect__ = original  # type: ignore[attr-defined]
    shell.object_inspect_mime = object_inspect_mime

    def restore() -> None:
        if getattr(shell, "object_inspect_mime", None) is object_inspect_mime:
            del shell.object_inspect_mime
    return restore


def describe_subcommand(name: str) -> dict[str, str] | None:
    """Shift+Tab on `%a0 inspect` (the kernel asks about `inspect`) or on `%a0` itself: usage and summary."""
    import html
    from a0nb.notebook.commands import SUBCOMMANDS, help_text
    name = name.strip().lstrip("%")
    if name == "a0":
        text = help_text()
    elif name in SUBCOMMANDS:
        sub = SUBCOMMANDS[name]
        text = f"{sub.usage}\n\n{sub.summary}\n\n(`%a0 help` lists every subcommand)"
    else:
        return None
    return {"text/plain": text, "text/html": f"<pre>{html.escape(text)}</pre>"}


def describe_name(agent: Any, name: str) -> dict[str, str] | None:
    """A text/plain + text/html description of a tool or skill called `name`, else None."""
    import html
    name = name.strip()
    tool = agent.tools.available().get(name)
    if tool is not None:
        text = (f"a0nb tool {tool.name} ({tool.kind}, from {tool.root_label})\n"
                f"file: {tool.path or 'registered in the notebook'}\n\n{tool.description.strip() or tool.prompt()}")
    else:
        skills = agent.skills()
        skill = skills.get(name) or skills.get(name.replace("_", "-"))
        if skill is None:
            return None
        body = "\n".join(skill.body.strip().splitlines()[:30])
        text = (f"a0nb skill {skill.name} (from {skill.root_label})\nfile: {skill.path}\n\n"
                f"{skill.description.strip()}\n\n{body}")
    return {"text/plain": text, "text/html": f"<pre>{html.escape(text)}</pre>"}


__all__ = ["install", "complete", "describe_name", "describe_subcommand", "file_paths", "MATCHER_ID"]
