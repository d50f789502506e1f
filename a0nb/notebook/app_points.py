"""Agent Zero's application points, fired where a notebook has their equivalent.

Agent Zero fires some points from its web server rather than from an agent: `startup_migration` and
`_functions/__main__/init_a0/...` when the application starts, `banners` when the welcome screen asks for banners, `user_message_ui` when a
message arrives from the UI, and `job_loop` from a background tick. In a notebook, `%load_ext a0nb` is the
start and the welcome, `%a0 ask` is the UI's message, and the end of a cell is the tick (at most once a
minute, as Agent Zero's loop sleeps a minute between ticks). Points fired without an agent (`agent=None`,
as upstream) use the notebook's agent when it exists, else a registry of the notebook folder's files."""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from a0nb.errors import A0Error

if TYPE_CHECKING:
    from a0nb.files.extensions import Extensions
    from a0nb.notebook.magics import A0Magics

STARTUP = ("startup_migration", "_functions/__main__/init_a0/start", "_functions/__main__/init_a0/end")
JOB_LOOP_SECONDS = 60.0
# What the welcome screen tells banner extensions about the page. a0nb serves nothing on the network: the
# notebook's front end reaches the kernel through Jupyter (with Jupyter's own authentication), so for a0nb
# the user is local.
FRONTEND_CONTEXT = {"hostname": "localhost", "protocol": "", "surface": "notebook", "is_welcome": True}


class AppPoints:
    """The application points of one `%load_ext a0nb` (state: the folder registry, the last tick)."""

    def __init__(self, host: "A0Magics") -> None:
        self.host = host
        self._registry: Extensions | None = None
        self._last_tick: float | None = None

    def registry(self) -> "Extensions":
        agent = self.host._agent
        if agent is not None:
            return agent.extensions
        if self._registry is None:
            from a0nb.diagnostics import Diagnostics
            from a0nb.files.extensions import Extensions
            from a0nb.files.hierarchy import Hierarchy
            from a0nb.files.loader import ModuleLoader
            diagnostics = Diagnostics()  # the agent reports the folder's problems when it is built
            hierarchy = Hierarchy(os.getcwd(), self.host.options.profile or "default", diagnostics=diagnostics)
            self._registry = Extensions(hierarchy, ModuleLoader(diagnostics), diagnostics)
        return self._registry

    def fire(self, point: str, **kwargs: Any) -> bool:
        """Run the point's extensions with no agent; False (and one warning line) when one failed."""
        registry = self.registry()
        try:
            _run(lambda: registry.call(point, None, **kwargs))
        except A0Error as exc:
            self.host.out.note(f"a0: extension point {point} failed: {exc}")
            return False
        return True

    def held(self, points: tuple[str, ...]) -> set[str]:
        """The points worth firing: all of them once a registry exists (the agent's, or the folder's), else
        those some folder may serve (app_roots.held: stats only; the hierarchy is built only for a hit)."""
        if self.host._agent is not None or self._registry is not None:
            return set(points)
        from a0nb.notebook.app_roots import held
        return held(points, os.getcwd(), self.host.options.profile or "default")

    def loaded(self) -> None:
        """`%load_ext a0nb`: the application started, then the welcome screen's banners."""
        held = self.held((*STARTUP, "banners"))
        for point in STARTUP:
            if point in held:
                self.fire(point)
        banners: list[dict[str, Any]] = []
        if "banners" in held and self.fire("banners", banners=banners, frontend_context=dict(FRONTEND_CONTEXT)):
            for banner in sorted(banners, key=lambda b: -int(b.get("priority", 0) or 0)):
                self.host.out.publish(banner_bundle(banner))

    def cell_ran(self, result: Any = None) -> None:
        """IPython's post_run_cell: Agent Zero's `job_loop` tick, at most once a minute."""
        now = time.monotonic()
        if self._last_tick is not None and now - self._last_tick < JOB_LOOP_SECONDS:
            return
        self._last_tick = now
        if "job_loop" in self.held(("job_loop",)):
            self.fire("job_loop")

    def user_message(self, agent: Any, message: str, attachments: list[str]) -> tuple[str, list[str]]:
        """`user_message_ui` before the turn starts: extensions may rewrite the message or its attachments."""
        data: dict[str, Any] = {"message": message, "attachment_paths": list(attachments)}
        agent.shared.bridge.run(lambda: agent.fire("user_message_ui", data=data))
        return str(data.get("message") or ""), list(data.get("attachment_paths") or [])


def banner_bundle(banner: dict[str, Any]) -> dict[str, str]:
    """A banner as a notebook output: its title and text; the HTML keeps the banner's own markup."""
    import html
    title = str(banner.get("title") or banner.get("id") or "banner")
    kind = str(banner.get("type") or "info")
    body = str(banner.get("html") or banner.get("text") or "")
    plain = " ".join(html.unescape(_strip_tags(body)).split())
    colour = {"warning": "#9a6700", "error": "#d1242f"}.get(kind, "#0969da")
    return {"text/plain": f"a0 {kind}: {title}: {plain}".rstrip(": "),
            "text/html": f'<div style="border-left:4px solid {colour};padding:4px 10px;margin:4px 0">'
                         f"<b>{html.escape(title)}</b><br>{body}</div>"}


def _strip_tags(text: str) -> str:
    import re
    return re.sub(r"<[^>]+>", " ", text)


def _run(make: Callable[[], Awaitable[Any]]) -> Any:
    """Await `make()` from synchronous code, also when the caller's thread runs an event loop (a kernel)."""
    import asyncio
    import concurrent.futures
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_call(make))
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="a0nb-app-point") as pool:
        return pool.submit(asyncio.run, _call(make)).result()


async def _call(make: Callable[[], Awaitable[Any]]) -> Any:
    return await make()


__all__ = ["AppPoints", "FRONTEND_CONTEXT", "JOB_LOOP_SECONDS", "STARTUP", "banner_bundle"]
