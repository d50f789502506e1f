"""`%a0 map VAR "template"`: `Agent.map` over a notebook variable, with a progress line in a front end
(done / failed / running, ETA, cost so far), the kernel interrupt keeping finished items, and one summary."""
from __future__ import annotations

import html
import time
from typing import Any

from IPython.core.error import UsageError

from a0nb.errors import A0Error
from a0nb.notebook.commands import Host
from a0nb.notebook.commands.parsing import Parser, split_words

DEFAULT_OUTPUT = "_a0map"
INTERVAL = 0.25  # seconds between progress updates (the last one always goes out)


def map_parser() -> Parser:
    p = Parser(prog="%a0 map", add_help=False)
    p.add_argument("variable")
    p.add_argument("template")
    p.add_argument("-c", "--concurrency", type=int, default=4)
    p.add_argument("--executor", choices=("threads", "ray"), default="threads")
    p.add_argument("--address", help="the Ray cluster to join (executor ray)")
    p.add_argument("-o", "--output", metavar="NAME", default=DEFAULT_OUTPUT)
    return p


class ProgressLine:
    """tqdm's conventions as one updating HTML line (a bar, then counts, ETA and cost); front ends only."""

    def __init__(self) -> None:
        from IPython.display import display
        self.handle = display({"text/plain": "starting…"}, raw=True, display_id=True)
        self.last = 0.0

    def __call__(self, progress: Any, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self.last < INTERVAL and progress.finished < progress.total:
            return
        self.last = now
        line = progress.line()
        bar = (f'<progress value="{progress.finished}" max="{progress.total}" style="width:240px;vertical-align:middle">'
               f"</progress> ")
        self.handle.update({"text/plain": line, "text/html": bar + html.escape(line)}, raw=True)


def map_line(host: Host, rest: str) -> None:
    opts = map_parser().parse_args(split_words("%a0 map", rest))
    namespace = host.shell.user_ns
    if opts.variable not in namespace:
        raise UsageError(f"%a0 map: no variable named {opts.variable!r} in the notebook "
                         f"(write %a0 map VARIABLE \"template with {{item}}\")")
    agent = host.agent
    host.sync(agent)
    progress = ProgressLine() if host.interactive() else None
    try:
        result = agent.map(namespace[opts.variable], opts.template, concurrency=opts.concurrency,
                           executor=opts.executor, address=opts.address, on_progress=progress)
    except A0Error as exc:
        host.out.error(exc)
        return
    if progress is not None:
        from a0nb.engine.batch import Progress
        done = Progress(len(result), len(result) - len(result.failed), len(result.failed), 0, result.cost)
        done.started -= result.elapsed
        progress(done, final=True)
    namespace[opts.output] = result
    from a0nb.inspector import render_map  # the inspector loads on first use
    host.out.publish(render_map(result, name=opts.output, agent=agent))


__all__ = ["map_line", "map_parser"]
