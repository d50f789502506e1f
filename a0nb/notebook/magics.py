"""The notebook layer: `%load_ext a0nb` and the `%a0` / `%%a0` magic, its subcommands dispatched through
one table. A thin adapter over `Agent`; config is `A0` (magic_config), output is `Output` (magic_output)."""
from __future__ import annotations

import asyncio

import argparse
import os
import re
import shlex
import sys
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from a0nb.notebook.chat import ChatMode, keep_question_marks
from a0nb.errors import A0Error, ConfigError
from a0nb.providers.foreground import FOREGROUND
from a0nb.notebook.magic_config import A0, FORMATS
from a0nb.notebook.magic_output import Output, render, turn_metadata

_FIELD = re.compile(r"\{([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}")
_AT_PATH = re.compile(r"(?<!\S)@([\w\-./~]+)")


# -- subcommands -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sub:
    usage: str
    summary: str
    view: str = ""  # an inspector rendering of the agent, shown as is (no method of its own)


SUBCOMMANDS: dict[str, Sub] = {
    "ask": Sub("%a0 ask [-f FORMAT] [--model SPEC] [--profile NAME] [--no-history] [-o NAME] [-i] TEXT",
               "send a message to the agent (or write a %%a0 cell)"),
    "model": Sub("%a0 model [SPEC]", "show or set the chat model (litellm id, scripted:FILE, replay:FILE)"),
    "utility": Sub("%a0 utility [SPEC]", "show or set the utility model (summaries, compaction)"),
    "profile": Sub("%a0 profile [NAME]", "list profiles, or switch to one"),
    "reset": Sub("%a0 reset", "forget the conversation (history, turns, call records)"),
    "inspect": Sub("%a0 inspect [N] [--diff M] [--export PATH]",
                   "show model call N (default: the last), diff it with call M, or export the trace"),
    "prompt": Sub("%a0 prompt", "the system prompt, section by section, with where each part came from",
                  view="render_prompt"),
    "extras": Sub("%a0 extras", "the extras (temporary and persistent) of the last call", view="render_extras"),
    "history": Sub("%a0 history", "the conversation history as the model sees it", view="render_history"),
    "skills": Sub("%a0 skills", "the skills found in the hierarchy", view="render_skills"),
    "tools": Sub("%a0 tools", "the tools found in the hierarchy", view="render_tools"),
    "extensions": Sub("%a0 extensions [POINT]", "extensions per point (or for one point)"),
    "paths": Sub("%a0 paths", "the search hierarchy, highest priority first", view="render_paths"),
    "diagnostics": Sub("%a0 diagnostics", "problems found while loading files", view="render_diagnostics"),
    "record": Sub("%a0 record CASSETTE", "record the current model's calls into CASSETTE"),
    "replay": Sub("%a0 replay CASSETTE", "answer from CASSETTE instead of the model"),
    "live": Sub("%a0 live", "back to the real model after record/replay"),
    "chat": Sub("%a0 chat on|off", "chat mode: a plain cell is a message to the agent; %%python runs code"),
    "template": Sub("%a0 template NAME", "insert a feature plugin's template as the next cell"),
    "plugins": Sub("%a0 plugins [enable NAME | disable NAME [--scope notebook|user] | config NAME [key=value ...]]",
                   "list plugins, switch one on or off, show (a form, live) or set its config"),
    "help": Sub("%a0 help", "this help"),
}


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one-line UsageErrors instead of exits."""

    def error(self, message: str) -> typing.NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")

    def exit(self, status: int = 0, message: str | None = None) -> typing.NoReturn:
        raise UsageError(message or f"{self.prog}: bad arguments")


def _plugin_and_scope(action: str, args: list[str]) -> tuple[str, str]:
    p = _Parser(prog=f"%a0 plugins {action}", add_help=False)
    p.add_argument("name")
    p.add_argument("--scope", choices=("notebook", "user"), default="notebook")
    opts = p.parse_args(args)
    return opts.name, opts.scope


def _ask_parser(prog: str) -> _Parser:
    p = _Parser(prog=prog, add_help=False)
    p.add_argument("-f", "--format", choices=FORMATS)
    p.add_argument("--model")
    p.add_argument("--profile")
    p.add_argument("--no-history", action="store_true")
    p.add_argument("-o", "--output", metavar="NAME")
    p.add_argument("-i", "--interpolate", action="store_true")
    return p


_VALUED = {"-f", "--format", "--model", "--profile", "-o", "--output"}


def split_options(text: str) -> tuple[list[str], str]:
    """Leading `-x` words of a line (and their values); the rest stays raw text (quotes, braces)."""
    tokens: list[str] = []
    pos = 0
    word = re.compile(r"\s*(\S+)")
    while (m := word.match(text, pos)) and m.group(1).startswith("-") and m.group(1) != "-":
        pos = m.end()
        if m.group(1) == "--":
            break
        tokens.append(m.group(1))
        if m.group(1) in _VALUED and (v := word.match(text, pos)):
            tokens.append(v.group(1))
            pos = v.end()
    return tokens, text[pos:].strip()


def _split(prog: str, text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as exc:  # an unbalanced quote
        raise UsageError(f"{prog}: {exc}") from None


def interpolate(text: str, namespace: dict[str, Any]) -> str:
    """`{name}` / `{name.attr}` from the namespace; any other brace is left as written."""
    def sub(m: re.Match[str]) -> str:
        head, *attrs = m.group(1).split(".")
        if head not in namespace:
            return m.group(0)
        value = namespace[head]
        for attr in attrs:
            if not hasattr(value, attr):
                return m.group(0)
            value = getattr(value, attr)
        return str(value)
    return _FIELD.sub(sub, text)


def help_text() -> str:
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


# -- the magics ------------------------------------------------------------------------------------

@magics_class
class A0Magics(Magics):
    """The `%a0` magic. State (agent, config, chat mode, completion hooks) lives on this instance."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.options = A0(parent=shell)
        self.chat = ChatMode(shell)
        self.out = Output(shell)
        self._agent: Any = None
        self._live_spec: str | None = None
        self._uninstall: Callable[[], None] | None = None
        self.options.observe(self._profile_changed, names=["profile"])
        self.options.observe(self._chat_changed, names=["chat"])

        def a0nb_async_asks(lines: list[str]) -> list[str]:
            return self._awaitable_cell(lines)
        a0nb_async_asks.has_side_effects = True  # type: ignore[attr-defined]
        self._async_transformer = a0nb_async_asks

    # -- lifecycle ----------------------------------------------------------------------------
    def install(self) -> None:
        from a0nb.notebook.completion import install
        if self.options not in self.shell.configurables:
            self.shell.configurables.append(self.options)
        self._uninstall = install(self.shell, self)
        cleanup = self.shell.input_transformers_cleanup
        cleanup[:] = [t for t in cleanup if getattr(t, "__name__", "") not in (keep_question_marks.__name__,
                                                                              "a0nb_async_asks")]
        cleanup.append(self._async_transformer)
        cleanup.append(keep_question_marks)
        if self.options.chat:
            self.chat.enable()

    def uninstall(self) -> None:
        self.chat.disable()
        cleanup = self.shell.input_transformers_cleanup
        cleanup[:] = [t for t in cleanup if getattr(t, "__name__", "") not in (keep_question_marks.__name__,
                                                                              "a0nb_async_asks")]
        if self._uninstall is not None:
            self._uninstall()
            self._uninstall = None
        for obj in (self.options, self):
            while obj in self.shell.configurables:
                self.shell.configurables.remove(obj)
        if self._agent is not None:
            self._agent.shared.bridge.close()

    # -- the agent ----------------------------------------------------------------------------
    @property
    def agent(self) -> Any:
        """The agent of this notebook, created on first use in the kernel's folder and namespace."""
        if self._agent is None:
            from a0nb.engine.agent import Agent
            agent = Agent(os.getcwd(), namespace=self.shell.user_ns)
            if self.options.profile != agent.profile:
                self._set_profile(agent, self.options.profile)
            self._agent = agent
        self._sync(self._agent)
        return self._agent

    def _sync(self, agent: Any, **overrides: Any) -> None:
        """Write the `%config` layer into the agent (approval defaults to what the front end allows)."""
        layer = dict(self.options.explicit)
        if "approval" not in layer and not os.environ.get("A0NB_APPROVAL"):
            layer["approval"] = "ask" if self._stdin_allowed() else "deny"
        layer.update({k: v for k, v in overrides.items() if v is not None})
        if layer != agent.shared.magic_settings:
            agent.shared.magic_settings.clear()
            agent.shared.magic_settings.update(layer)

    def _parent_content(self) -> dict[str, Any] | None:
        kernel = getattr(self.shell, "kernel", None)
        if kernel is None or not hasattr(kernel, "get_parent"):
            return None
        parent = kernel.get_parent() or {}
        return parent.get("content") or {}

    def _stdin_allowed(self) -> bool:
        content = self._parent_content()
        if content is None:
            return bool(getattr(sys.stdin, "isatty", lambda: False)())
        return bool(content.get("allow_stdin", False))

    def interactive(self) -> bool:
        """Live widgets only in a front end: a kernel whose request allows stdin (nbclient/nbval do not)."""
        if os.environ.get("A0NB_STATIC", "") not in ("", "0"):
            return False
        content = self._parent_content()
        return bool(content and content.get("allow_stdin", False))

    def _set_profile(self, agent: Any, name: str) -> None:
        try:
            agent.set_profile(name)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None

    def _profile_changed(self, change: Any) -> None:
        if self._agent is not None and change["new"] != self._agent.profile:
            self._set_profile(self._agent, change["new"])

    def _chat_changed(self, change: Any) -> None:
        (self.chat.enable if change["new"] else self.chat.disable)()

    # -- the magic ----------------------------------------------------------------------------
    @no_var_expand
    @line_cell_magic
    def a0(self, line: str, cell: str | None = None) -> None:
        if cell is not None:
            return self._guard(self.ask_cell, line, cell)
        name, _, rest = line.strip().partition(" ")
        if not name:
            print(help_text())
            return None
        sub, rest = SUBCOMMANDS.get(name), rest.strip()
        if sub is None:
            raise UsageError(f"unknown subcommand {name!r}; valid: {', '.join(SUBCOMMANDS)} (see %a0 help)")
        if rest in ("--help", "-h"):
            print(f"{sub.usage}\n    {sub.summary}")
            return None
        if sub.view:
            if rest:
                raise UsageError(f"{sub.usage} takes no arguments")
            return self._guard(self._view, sub.view)
        return self._guard(getattr(self, f"sub_{name}"), rest)

    def _guard(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except UsageError:
            raise
        except A0Error as exc:
            self.out.error(exc)

    # -- asking -------------------------------------------------------------------------------
    def sub_ask(self, rest: str) -> None:
        self._ask(*self._parse_line_ask(rest))

    def _parse_line_ask(self, rest: str) -> tuple[argparse.Namespace, str]:
        tokens, text = split_options(rest)
        return _ask_parser("%a0 ask").parse_args(tokens), text

    def ask_cell(self, line: str, cell: str) -> None:
        parsed = self._parse_cell(line, cell)
        if parsed is not None:
            self._ask(*parsed)

    def _parse_cell(self, line: str, cell: str) -> tuple[argparse.Namespace, str] | None:
        tokens = _split("%%a0", line)
        if tokens[:1] == ["ask"]:
            tokens = tokens[1:]
        if tokens in (["--help"], ["-h"]):
            print(SUBCOMMANDS["ask"].usage.replace("%a0 ask", "%%a0") + "\n    the cell body is the message")
            return None
        # IPython hands the body over with its final newline; the message is the text as typed
        return _ask_parser("%%a0").parse_args(tokens), cell.lstrip("\n").rstrip()

    def _begin(self, opts: argparse.Namespace, text: str) -> tuple[Any, str, str]:
        if opts.interpolate:
            text = interpolate(text, self.shell.user_ns)
        if not text.strip():
            raise UsageError("%a0 ask needs a message (%a0 ask TEXT, or a %%a0 cell)")
        agent = self.agent
        previous = agent.profile
        if opts.profile:
            self._set_profile(agent, opts.profile)
        self._sync(agent, model=opts.model)
        return agent, previous, text

    def _end(self, agent: Any, opts: argparse.Namespace, previous: str) -> None:
        self._sync(agent)
        if opts.profile and agent.profile != previous:
            agent.set_profile(previous)

    def _ask(self, opts: argparse.Namespace, text: str) -> None:
        with FOREGROUND:  # the answer's rendering too: background warm-ups give way until the cell is done
            agent, previous, text = self._begin(opts, text)
            try:
                self._run_turn(agent, opts, text)
            finally:
                self._end(agent, opts, previous)

    def _run_turn(self, agent: Any, opts: argparse.Namespace, text: str) -> None:
        attachments = [m for m in _AT_PATH.findall(text) if (agent.workdir / m).exists()]
        started = len(agent.turns)
        live = self._start_live(agent)
        try:
            turn = agent.ask(text, attachments=attachments, history=not opts.no_history)
        except (A0Error, KeyboardInterrupt) as exc:
            self._failed(agent, live, opts, started, exc)
            return
        self._succeeded(agent, live, opts, turn)

    async def ask_awaitable(self, line: str, cell: str | None) -> None:
        """`%a0 ask` / `%%a0` awaited in the kernel's own loop: the loop stays free during the turn, so the
        live inspector's tabs answer while the agent works (ipykernel serves widget messages of async cells)."""
        try:
            parsed = self._parse_cell(line, cell) if cell is not None else self._parse_line_ask(line.strip()[4:])
            if parsed is None:
                return
            agent, previous, text = self._begin(*parsed)
            opts = parsed[0]
            with FOREGROUND:  # background warm-ups give way until the answer is shown
                try:
                    attachments = [m for m in _AT_PATH.findall(text) if (agent.workdir / m).exists()]
                    started = len(agent.turns)
                    live = self._start_live(agent)
                    try:
                        turn = await agent.ask_background(text, attachments=attachments, history=not opts.no_history)
                    except (A0Error, KeyboardInterrupt, asyncio.CancelledError) as exc:
                        self._failed(agent, live, opts, started, exc)
                        return
                    self._succeeded(agent, live, opts, turn)
                finally:
                    self._end(agent, opts, previous)
        except UsageError:
            raise
        except A0Error as exc:
            self.out.error(exc)

    def _can_await(self) -> bool:
        """Only in a live ipykernel front end with autoawait: there the cell's loop is the kernel's."""
        return (type(self.shell).__name__ == "ZMQInteractiveShell" and bool(getattr(self.shell, "autoawait", False))
                and self.interactive())

    def _awaitable_cell(self, lines: list[str]) -> list[str]:
        """Rewrite a `%%a0` cell or a lone `%a0 ask …` line into an awaited call of `ask_awaitable`."""
        if not any("%a0" in line for line in lines):
            return lines
        body = [line for line in lines if line.strip()]
        if not body:
            return lines
        head = body[0].strip()
        call = "await __import__('a0nb.notebook.magics', fromlist=['get_magics']).get_magics(get_ipython()).ask_awaitable"
        if head.startswith("%%a0") and (len(head) == 4 or head[4].isspace()):
            first = next(i for i, line in enumerate(lines) if line.strip())
            if not self._can_await():
                return lines
            return [f"{call}({head[4:].strip()!r}, {''.join(lines[first + 1:])!r})\n"]
        if len(body) == 1 and re.match(r"^%a0\s+ask(\s|$)", head) and self._can_await():
            return [f"{call}({head[4:].strip()!r}, None)\n"]
        return lines

    def _failed(self, agent: Any, live: Any, opts: argparse.Namespace, started: int, exc: BaseException) -> None:
        if isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError)):
            # a second interrupt while the turn was winding down: stop it and keep the notebook usable
            agent.interrupt()
            exc = A0Error("interrupted; the turn stops at its next checkpoint")
        self._finish(live, opts, agent.turns[-1] if len(agent.turns) > started else None)
        self.out.error(exc)  # type: ignore[arg-type]

    def _succeeded(self, agent: Any, live: Any, opts: argparse.Namespace, turn: Any) -> None:
        self._finish(live, opts, turn)
        fmt = opts.format or self.options.format
        self.out.answer(turn, fmt, turn_metadata(agent, turn), live is not None)
        if fmt == "markdown":  # plugins' footer and status lines go under the answer card
            footer = render("render_footer", agent, turn)
            if footer is not None:
                self.out.publish(footer)

    def _start_live(self, agent: Any) -> Any:
        if not self.interactive():
            return None
        try:
            from a0nb.inspector.live import LiveTurn
        except ImportError:
            return None
        live = LiveTurn(agent)
        live.start()
        return live

    def _finish(self, live: Any, opts: argparse.Namespace, turn: Any) -> None:
        if opts.output and turn is not None:
            self.shell.user_ns[opts.output] = turn
        if live is not None and turn is not None:
            live.finish(turn)

    # -- settings subcommands -----------------------------------------------------------------
    def sub_model(self, rest: str) -> None:
        self._model_sub("model", "chat", rest)

    def sub_utility(self, rest: str) -> None:
        self._model_sub("utility_model", "utility", rest)

    def _model_sub(self, trait: str, role: str, rest: str) -> None:
        if rest:
            setattr(self.options, trait, rest)
            if trait == "model":
                self._live_spec = None
        spec = self.agent.model_spec(role)
        if rest and role == "chat":
            self.agent._warm()  # a real model: its library imports in the background while the user types
        self.out.note(f"{role} model: {spec or '(none configured)'}")

    def sub_profile(self, rest: str) -> None:
        agent = self.agent
        if rest:
            self._set_profile(agent, rest)
            self.options.profile = rest
        lines = [f"{'*' if n == agent.profile else ' '} {n:<14} {p.title or p.description}".rstrip()
                 for n, p in agent.profiles().items()]
        self.out.note("profiles (* = active):\n" + "\n".join(lines))

    def sub_reset(self, rest: str) -> None:
        self.agent.reset()
        self.out.note("a0: the conversation was reset")

    def sub_chat(self, rest: str) -> None:
        if rest not in ("on", "off"):
            raise UsageError("usage: %a0 chat on|off")
        self.options.chat = rest == "on"
        on = "on — a plain cell is a message; %%python runs code"
        self.out.note("a0: chat mode " + (on if rest == "on" else "off"))

    # -- record / replay --------------------------------------------------------------------------
    def _current_live(self) -> str:
        spec = self.agent.model_spec("chat")
        if spec.startswith("record:"):
            return spec.split(":", 2)[2] if spec.count(":") >= 2 else ""
        if spec.startswith("replay:"):
            return self._live_spec or ""
        return spec

    def sub_record(self, rest: str) -> None:
        cassette = self._cassette_arg("record", rest, must_exist=False)
        live = self._current_live()
        if not live:
            from a0nb.providers.registry import no_model_message
            raise UsageError("%a0 record wraps the current model, but " + no_model_message())
        self.options.model = f"record:{cassette}:{live}"
        self._live_spec = live
        self.out.note(f"a0: recording {live} into {cassette}")

    def sub_replay(self, rest: str) -> None:
        cassette = self._cassette_arg("replay", rest, must_exist=True)
        self._live_spec = self._current_live() or self._live_spec
        self.options.model = f"replay:{cassette}"
        self.out.note(f"a0: replaying {cassette}")

    def sub_live(self, rest: str) -> None:
        live = self._current_live()
        self.options.model = live or None
        self._live_spec = None
        self.out.note(f"a0: live model {live or '(none configured)'}")

    def _cassette_arg(self, sub: str, rest: str, must_exist: bool) -> str:
        if not rest or len(rest.split()) != 1:
            raise UsageError(SUBCOMMANDS[sub].usage)
        path = Path(rest).expanduser()
        full = path if path.is_absolute() else self.agent.workdir / path
        if must_exist and not full.is_file():
            raise UsageError(f"%a0 {sub}: cassette {rest} not found (looked for {full})")
        if not must_exist and not full.parent.is_dir():
            raise UsageError(f"%a0 {sub}: folder {full.parent} does not exist")
        return rest

    # -- views ----------------------------------------------------------------------------------
    def sub_inspect(self, rest: str) -> None:
        p = _Parser(prog="%a0 inspect", add_help=False)
        p.add_argument("n", nargs="?", type=int)
        p.add_argument("--diff", type=int, metavar="M")
        p.add_argument("--export", metavar="PATH")
        opts = p.parse_args(_split("%a0 inspect", rest))
        agent = self.agent
        if opts.export:
            path = Path(opts.export)
            path = path if path.is_absolute() else agent.workdir / path
            render("export_trace", agent, path)
            self.out.note(f"a0: exported {len(agent.calls)} calls to {path}")
            return
        if not agent.calls:
            self.out.note("a0: no model calls yet (run %a0 ask first)")
            return
        record = self._call(agent, opts.n)
        if opts.diff is not None:
            self.out.publish(render("render_diff", self._call(agent, opts.diff), record))
        else:
            self.out.publish(render("render_call", record))

    def _call(self, agent: Any, n: int | None) -> Any:
        calls = agent.calls
        if n is None:
            return calls[-1]
        if n < 0 and -n <= len(calls):
            return calls[n]
        found = next((c for c in calls if c.index == n), None)
        if found is None:
            raise UsageError(f"%a0 inspect: no call {n}; calls are {calls[0].index}..{calls[-1].index}")
        return found

    def _view(self, name: str, *args: Any) -> None:
        self.out.publish(render(name, self.agent, *args))

    def sub_extensions(self, rest: str) -> None:
        from a0nb.files.points import POINTS, is_known
        if rest and not is_known(rest):
            raise UsageError(f"%a0 extensions: unknown point {rest!r}; points: {', '.join(POINTS)}")
        self._view("render_extensions", rest or None)

    def sub_template(self, rest: str) -> None:
        from a0nb.files.features import features, find_template
        agent = self.agent
        agent.refresh()
        found = features(agent)
        if not rest:
            names = ", ".join(f"{f.name} ({f.root_label})" for f in found) or "none"
            self.out.note(f"usage: %a0 template NAME — feature plugins found (features/*.py): {names}")
            return
        hit = find_template(agent, rest)
        if hit is None:
            where = ", ".join(f.name for f in found) or "no feature plugins (features/*.py) in the hierarchy"
            raise UsageError(f"%a0 template: no template {rest!r} ({where})")
        text, feature = hit
        self.shell.set_next_input(text, replace=False)
        self.out.note(f"a0: template {rest} from {feature.name} ({feature.root_label}) inserted as the next cell")

    def sub_plugins(self, rest: str) -> None:
        from a0nb.notebook.plugin_admin import PluginAdmin
        admin = PluginAdmin(self.agent)
        try:
            words = shlex.split(rest)
        except ValueError as exc:
            raise UsageError(f"%a0 plugins: {exc}") from None
        action, args = (words[0], words[1:]) if words else ("list", [])
        if action == "list" and not args:
            self._view("render_plugins")
        elif action in ("enable", "disable"):
            name, scope = _plugin_and_scope(action, args)
            self.out.note(admin.switch(name, action == "enable", scope))
        elif action == "config" and args:
            name, assignments = args[0], args[1:]
            if assignments:
                self.out.note(admin.set_config(name, assignments))
            elif self.interactive():
                self.out.publish(admin.form(name).view)
            else:
                self.out.publish(admin.config_view(name))
        else:
            raise UsageError(f"usage: {SUBCOMMANDS['plugins'].usage}")

    def sub_help(self, rest: str) -> None:
        print(help_text())


A0Magics.a0.__doc__ = help_text()


# -- extension entry points --------------------------------------------------------------------------

def get_magics(shell: Any) -> A0Magics | None:
    """The loaded `A0Magics` of a shell (found by class name, so a reloaded module still matches)."""
    found = shell.magics_manager.registry.get("A0Magics")
    return found if found is not None and hasattr(found, "agent") else None


def load(shell: Any) -> A0Magics:
    existing = get_magics(shell)
    if existing is not None:
        return existing
    magics = A0Magics(shell)
    shell.register_magics(magics)
    magics.install()
    return magics


def unload(shell: Any) -> None:
    magics = get_magics(shell)
    if magics is None:
        return
    magics.uninstall()
    manager = shell.magics_manager
    for kind in ("line", "cell"):
        if getattr(manager.magics[kind].get("a0"), "__self__", None) is magics:
            manager.magics[kind].pop("a0")
    manager.registry.pop("A0Magics", None)


__all__ = ["A0", "A0Magics", "SUBCOMMANDS", "load", "unload", "get_magics", "interpolate", "split_options"]
