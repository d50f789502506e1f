"""`%a0 inspect [N] [--diff M] [--export PATH]`: one model call, the diff of two, or the whole trace; and
`%a0 search PHRASE`: where in the calls' parts a phrase (say, from an answer) came from."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from a0nb.notebook.commands import Host
from a0nb.notebook.commands.parsing import Parser, split_words
from a0nb.notebook.magic_output import render

if TYPE_CHECKING:
    from a0nb.engine.agent import Agent
    from a0nb.engine.records import CallRecord


def inspect(host: Host, rest: str) -> None:
    p = Parser(prog="%a0 inspect", add_help=False)
    p.add_argument("n", nargs="?", type=int)
    p.add_argument("--diff", type=int, metavar="M")
    p.add_argument("--export", metavar="PATH")
    opts = p.parse_args(split_words("%a0 inspect", rest))
    agent = host.agent
    if opts.export:
        path = Path(opts.export)
        path = path if path.is_absolute() else agent.workdir / path
        render("export_trace", agent, path)
        host.out.note(f"a0: exported {len(agent.calls)} calls to {path}")
        return
    if not agent.calls:
        host.out.note("a0: no model calls yet (run %a0 ask first)")
        return
    record = call(agent, opts.n)
    if opts.diff is not None:
        host.out.publish(render("render_diff", call(agent, opts.diff), record))
    else:
        host.out.publish(render("render_call", record))


def search(host: Host, rest: str) -> None:
    phrase = rest.strip().strip("\"'")
    if not phrase:
        raise UsageError("%a0 search needs a phrase, e.g. %a0 search current date")
    agent = host.agent
    if not agent.calls:
        host.out.note("a0: no model calls yet (run %a0 ask first)")
        return
    host.out.publish(render("render_search", agent.calls, phrase))


def call(agent: Agent, n: int | None) -> CallRecord:
    """Call `n` by its index (negative: from the end), the last one when `n` is None."""
    calls = agent.calls
    if n is None:
        return calls[-1]
    if n < 0 and -n <= len(calls):
        return calls[n]
    found = next((c for c in calls if c.index == n), None)
    if found is None:
        raise UsageError(f"%a0 inspect: no call {n}; calls are {calls[0].index}..{calls[-1].index}")
    return found
