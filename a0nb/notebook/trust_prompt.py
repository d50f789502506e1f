"""JupyterLab's folder-trust prompt: when the notebook's folder holds code a0nb did not run (folder trust,
docs/security.md), the first `%a0 ask` in a live front end shows what the folder would run with two
buttons and awaits the click on the kernel's loop (the ask is awaited there, so the front end's messages
keep flowing while the cell runs). Anywhere else the warning and `%a0 trust` remain."""
from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import Any

from a0nb.folder_trust import trust

WAIT = 600.0  # seconds before "Not now" is assumed


async def offer(message: str, folder: Path, *, wait: float = WAIT) -> bool:
    """Show `message` with Trust / Not now buttons; True when the user trusted `folder` (then remembered)."""
    import ipywidgets as w
    from IPython.display import display

    decided: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def choose(value: bool) -> None:
        if not decided.done():
            decided.set_result(value)

    yes = w.Button(description="Trust this folder", button_style="warning", icon="unlock")
    no = w.Button(description="Not now")
    yes.on_click(lambda _: choose(True))
    no.on_click(lambda _: choose(False))
    box = w.VBox([w.HTML(f"<pre style='white-space:pre-wrap'>{html.escape(message)}</pre>"), w.HBox([yes, no])])
    display(box)
    try:
        trusted = await asyncio.wait_for(decided, wait)
    except asyncio.TimeoutError:
        trusted = False
    finally:
        box.close()
    if trusted:
        trust(folder)
    note = f"a0: trusted {folder}" if trusted else f"a0: {folder} stays untrusted (`%a0 trust` trusts it later)"
    display({"text/plain": note}, raw=True)
    return trusted


async def offer_once(host: Any) -> None:
    """Before the first awaited ask: offer to trust the folder; once trusted, the agent starts afresh (its
    agent_init extensions run, now including the folder's)."""
    if getattr(host, "_trust_offered", False):
        return
    host._trust_offered = True
    agent = host.agent
    message = getattr(agent.hierarchy, "untrusted", "")
    if message and not agent.turns and await offer(message, agent.workdir):
        agent.refresh()
        agent.reset()


__all__ = ["offer", "offer_once"]
