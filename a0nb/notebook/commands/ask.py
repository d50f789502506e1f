"""`%a0 ask` and `%%a0`: one ask path. `Ask` applies the options, runs the turn through `Agent.ask` (or, in
a live kernel front end, awaits `Agent.ask_background` so the loop stays free), shows the answer, undoes."""
from __future__ import annotations

import argparse
import asyncio
import re
import time
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from a0nb.errors import A0Error
from a0nb.notebook.commands import SUBCOMMANDS, Host
from a0nb.notebook.commands.parsing import ask_parser, interpolate, split_options, split_words
from a0nb.inspector.text import answered
from a0nb.notebook.magic_output import error_bundle, render, turn_metadata
from a0nb.notebook.trust_prompt import offer_once
from a0nb.providers.foreground import FOREGROUND

if TYPE_CHECKING:
    from a0nb.engine.agent import Agent
    from a0nb.engine.turn import Turn

_AT_PATH = re.compile(r"(?<!\S)@([\w\-./~]+)")
_LINE_ASK = re.compile(r"^%a0\s+ask(\s|$)")
_CALL = "await __import__('a0nb.notebook.magics', fromlist=['get_magics']).get_magics(get_ipython()).ask_awaitable"

Parsed = tuple[argparse.Namespace, str]


def parse_line(rest: str) -> Parsed:
    tokens, text = split_options(rest)
    return ask_parser("%a0 ask").parse_args(tokens), text


def parse_cell(line: str, cell: str) -> Parsed | None:
    """A `%%a0 [ask] [options]` cell; None when it only asked for help (printed)."""
    tokens = split_words("%%a0", line)
    if tokens[:1] == ["ask"]:
        tokens = tokens[1:]
    if tokens in (["--help"], ["-h"]):
        print(SUBCOMMANDS["ask"].usage.replace("%a0 ask", "%%a0") + "\n    the cell body is the message")
        return None
    # IPython hands the body over with its final newline; the message is the text as typed
    return ask_parser("%%a0").parse_args(tokens), cell.lstrip("\n").rstrip()


class Ask:
    """One ask from the magic: `--profile`/`--model` applied for the turn and undone after it, the live view
    started in a front end, and the answer (or one error) shown when the turn ends."""

    def __init__(self, host: Host, opts: argparse.Namespace, text: str) -> None:
        if opts.interpolate:
            text = interpolate(text, host.shell.user_ns)
        if not text.strip():
            raise UsageError("%a0 ask needs a message (%a0 ask TEXT, or a %%a0 cell)")
        self.host, self.opts = host, opts
        self.agent = agent = host.agent
        self.previous = agent.profile
        if opts.profile:
            host.set_profile(agent, opts.profile)
        host.sync(agent, model=opts.model)
        self.started = len(agent.turns)
        attachments = [m for m in _AT_PATH.findall(text) if (agent.workdir / m).exists()]
        self.text, attachments = host.app.user_message(agent, text, attachments)  # Agent Zero's user_message_ui
        self.options = {"attachments": attachments, "history": not opts.no_history}
        self.live: Any = None
        self.live_done = False
        self.started_at = time.perf_counter()

    def start(self) -> dict[str, Any]:
        """The live view (in a front end) and the keyword arguments of `Agent.ask`."""
        self.live = _start_live(self.host, self.agent)
        self.started_at = time.perf_counter()
        return self.options

    def succeeded(self, turn: Turn) -> None:
        elapsed = time.perf_counter() - self.started_at  # the whole turn: model calls and tools
        self._finish(turn)
        fmt = self.opts.format or self.host.options.format
        self.host.out.answer(turn, fmt, turn_metadata(self.agent, turn), self.live is not None)
        if fmt == "markdown":  # plugins' footer and status lines go under the answer card
            footer = render("render_footer", self.agent, turn, elapsed)
            if footer is not None:
                self.host.out.publish(footer)

    def failed(self, exc: BaseException) -> None:
        if isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError)):
            # a second interrupt while the turn was winding down: stop it and keep the notebook usable
            self.agent.interrupt()
            exc = A0Error("interrupted; the turn stops at its next checkpoint")
        turns = self.agent.turns
        turn = turns[-1] if len(turns) > self.started else None
        if self.live is not None and not (turn is not None and any(answered(c) for c in turn.calls)):
            # nothing reached a model (e.g. none is configured): the live view becomes the one error line
            from a0nb.inspector import Rendering
            data, meta = error_bundle(exc)
            self.live.replace(Rendering(data["text/plain"], data["text/html"], meta))
            self.live = None
            self._finish(turn)
            return
        self._finish(turn)
        self.host.out.error(exc)

    def end(self) -> None:
        if self.live is not None and not self.live_done:  # an unexpected error ended the turn: the live
            self.live.finish()                               # view still stops listening to the agent
            self.live_done = True
        self.host.sync(self.agent)
        if self.opts.profile and self.agent.profile != self.previous:
            self.agent.set_profile(self.previous)

    def _finish(self, turn: Turn | None) -> None:
        if self.opts.output and turn is not None:
            self.host.shell.user_ns[self.opts.output] = turn
        if self.live is not None and turn is not None:
            self.live.finish(turn)
            self.live_done = True


def run(host: Host, opts: argparse.Namespace, text: str) -> None:
    """The blocking ask (scripts, nbclient, terminal IPython, a busy kernel)."""
    with FOREGROUND:  # the answer's rendering too: background warm-ups give way until the cell is done
        ask = Ask(host, opts, text)
        try:
            ask.succeeded(ask.agent.ask(ask.text, **ask.start()))
        except (A0Error, KeyboardInterrupt) as exc:
            ask.failed(exc)
        finally:
            ask.end()


async def run_awaited(host: Host, line: str, cell: str | None) -> None:
    """The same ask awaited in the kernel's own loop: the live inspector's tabs answer during the turn."""
    try:
        parsed = parse_cell(line, cell) if cell is not None else parse_line(line.strip()[4:])
        if parsed is None:
            return
        await offer_once(host)  # an untrusted folder: JupyterLab's trust prompt, once (trust_prompt.py)
        with FOREGROUND:
            ask = Ask(host, *parsed)
            try:
                ask.succeeded(await ask.agent.ask_background(ask.text, **ask.start()))
            except (A0Error, KeyboardInterrupt, asyncio.CancelledError) as exc:
                ask.failed(exc)
            finally:
                ask.end()
    except UsageError:
        raise
    except A0Error as exc:
        host.out.error(exc)


def ask_line(host: Host, rest: str) -> None:
    run(host, *parse_line(rest))


def ask_cell(host: Host, line: str, cell: str) -> None:
    parsed = parse_cell(line, cell)
    if parsed is not None:
        run(host, *parsed)


def _start_live(host: Host, agent: Agent) -> Any:
    """The live view of `agent`'s turn (the Ask's: `host.agent` would write the `%config` layer again, without
    the turn's `--model`)."""
    if not host.interactive():
        return None
    try:
        from a0nb.inspector.live import LiveTurn
    except ImportError:
        return None
    live = LiveTurn(agent)
    live.start()
    return live


def can_await(host: Host) -> bool:
    """Only in a live ipykernel front end with autoawait: there the cell's loop is the kernel's."""
    shell = host.shell
    return (type(shell).__name__ == "ZMQInteractiveShell" and bool(getattr(shell, "autoawait", False))
            and host.interactive())


def awaitable_cell(host: Host, lines: list[str]) -> list[str]:
    """Rewrite a `%%a0` cell or a lone `%a0 ask …` line into an awaited call of `ask_awaitable`."""
    if not any("%a0" in line for line in lines):
        return lines
    body = [line for line in lines if line.strip()]
    if not body:
        return lines
    head = body[0].strip()
    if head.startswith("%%a0") and (len(head) == 4 or head[4].isspace()):
        first = next(i for i, line in enumerate(lines) if line.strip())
        if not can_await(host):
            return lines
        return [f"{_CALL}({head[4:].strip()!r}, {''.join(lines[first + 1:])!r})\n"]
    if len(body) == 1 and _LINE_ASK.match(head) and can_await(host):
        return [f"{_CALL}({head[4:].strip()!r}, None)\n"]
    return lines


__all__ = ["Ask", "run", "run_awaited", "ask_line", "ask_cell", "parse_line", "parse_cell", "awaitable_cell"]
