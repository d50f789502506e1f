"""The `%a0` subcommand table: one `Sub` per name, each run by a function in a small module of this package
(`"settings:model"` = `commands/settings.py`'s `model`), imported on first use so `%load_ext` stays fast.

Adding a subcommand: write `commands/<group>.py` with `def NAME(host: Host, rest: str) -> None` and add one
entry to `SUBCOMMANDS`. Completion and `%a0 help` read the same table."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from a0nb.engine.agent import Agent
    from a0nb.notebook.magic_output import Output


class Host(Protocol):
    """What a subcommand may use: the shell, the agent, the `%config A0` options and the output.
    `A0Magics` is the one implementation; the protocol keeps subcommands from reaching into it."""

    shell: Any
    options: Any
    out: Output
    live_spec: str | None  # the real model behind record:/replay:, so `%a0 live` can go back to it
    app: Any  # Agent Zero's application points (a0nb.notebook.app_points.AppPoints)

    @property
    def agent(self) -> Agent: ...

    def interactive(self) -> bool: ...

    def set_profile(self, agent: Agent, name: str) -> None: ...

    def sync(self, agent: Agent, **overrides: Any) -> None: ...


@dataclass(frozen=True)
class Sub:
    usage: str
    summary: str
    run: str = ""   # "module:function" inside this package
    view: str = ""  # or: an inspector rendering of the agent, shown as is (takes no arguments)

    def handler(self) -> Callable[[Host, str], None]:
        module, _, name = self.run.partition(":")
        fn: Callable[[Host, str], None] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        return fn


SUBCOMMANDS: dict[str, Sub] = {
    "ask": Sub("%a0 ask [-f FORMAT] [--model SPEC] [--profile NAME] [--no-history] [-o NAME] [-i] TEXT",
               "send a message to the agent (or write a %%a0 cell)", "ask:ask_line"),
    "model": Sub("%a0 model [SPEC | preset [NAME|none]]",
                 "show or set the chat model (litellm id, scripted:FILE, replay:FILE), or a _model_config preset",
                 "settings:model"),
    "utility": Sub("%a0 utility [SPEC]", "show or set the utility model (summaries, compaction)", "settings:utility"),
    "profile": Sub("%a0 profile [NAME]", "list profiles, or switch to one", "settings:profile"),
    "reset": Sub("%a0 reset", "forget the conversation (history, turns, call records)", "settings:reset"),
    "inspect": Sub("%a0 inspect [N] [--diff M] [--export PATH]",
                   "show model call N (default: the last), diff it with call M, or export the trace",
                   "inspect:inspect"),
    "search": Sub("%a0 search PHRASE", "every part of every call (and reply) holding PHRASE, with its source file",
                  "inspect:search"),
    "prompt": Sub("%a0 prompt", "the system prompt, section by section, with where each part came from",
                  view="render_prompt"),
    "extras": Sub("%a0 extras", "the extras (temporary and persistent) of the last call", view="render_extras"),
    "history": Sub("%a0 history", "the conversation history as the model sees it", view="render_history"),
    "skills": Sub("%a0 skills", "the skills found in the hierarchy", view="render_skills"),
    "tools": Sub("%a0 tools [NAME]", "the tools found in the hierarchy (NAME: one tool with its DOX doc)",
                 "views:tools"),
    "extensions": Sub("%a0 extensions [POINT]", "extensions per point (or for one point)", "views:extensions"),
    "paths": Sub("%a0 paths", "the search hierarchy, highest priority first", view="render_paths"),
    "diagnostics": Sub("%a0 diagnostics", "problems found while loading files", view="render_diagnostics"),
    "record": Sub("%a0 record CASSETTE", "record the current model's calls into CASSETTE", "cassettes:record"),
    "replay": Sub("%a0 replay CASSETTE", "answer from CASSETTE instead of the model", "cassettes:replay"),
    "live": Sub("%a0 live", "back to the real model after record/replay", "cassettes:live"),
    "chat": Sub("%a0 chat on|off", "chat mode: a plain cell is a message to the agent; %%python runs code",
                "settings:chat"),
    "template": Sub("%a0 template NAME", "insert a feature plugin's template as the next cell", "views:template"),
    "plugins": Sub("%a0 plugins [enable NAME | disable NAME [--scope notebook|user] | config NAME [key=value ...]]",
                   "list plugins, switch one on or off, show (a form, live) or set its config", "plugins:plugins"),
    "memory": Sub("%a0 memory [list [AREA] | search QUERY | show ID | delete ID ... | import | recalled]",
                  "the agent's long-term memory (global or the project's) and its knowledge import", "memory:memory"),
    "mcp": Sub("%a0 mcp [start|stop]", "MCP servers: state, tools, errors (they start lazily)", "memory:mcp"),
    "trust": Sub("%a0 trust [PATH]", "trust a folder (default: this notebook's) to run its code and model settings",
                 "trust:trust"),
    "map": Sub('%a0 map [-c N] [--executor threads|ray] [--address ADDR] [-o NAME] VAR "TEMPLATE {item}"',
               "ask once per item of VAR, each by a fresh agent; a summary with every item's turn",
               "batch:map_line"),
    "help": Sub("%a0 help", "this help", "views:help"),
}


def help_text() -> str:
    from a0nb.notebook.magic_config import FORMATS
    width = 42
    lines = ["a0nb — Agent Zero in the notebook.", "",
             f"{'%%a0 [options]':<{width}}  (cell) the cell is the message; options as for `ask`"]
    for s in SUBCOMMANDS.values():
        usage = s.usage if len(s.usage) <= width else f"{s.usage}\n{'':<{width}}"
        lines.append(f"{usage:<{width}}  {s.summary}")
    lines += ["", "Formats: " + ", ".join(FORMATS) + ". `-i` fills {name} from your variables.",
              "Configure with %config A0.<setting> = ... (or env A0NB_<SETTING>); `%config A0` lists them.",
              "`%a0 <subcommand> --help` shows one subcommand."]
    return "\n".join(lines)


def get_magics(shell: Any) -> Any:
    """The loaded `%a0` host of a shell (found by class name, so a reloaded module still matches), or None."""
    found = shell.magics_manager.registry.get("A0Magics")
    return found if found is not None and hasattr(found, "agent") else None


__all__ = ["Host", "Sub", "SUBCOMMANDS", "help_text", "get_magics"]
