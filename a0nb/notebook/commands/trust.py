"""`%a0 trust [PATH]`: trust a folder (default: the notebook's) so its extensions, tools, plugins and
model endpoints are used; remembered under the a0nb home (docs/security.md)."""
from __future__ import annotations

import os
from pathlib import Path

from IPython.core.error import UsageError

from a0nb.errors import ConfigError
from a0nb.folder_trust import trust as remember
from a0nb.notebook.commands import Host


def trust(host: Host, rest: str) -> None:
    text = rest.strip()
    folder = Path(os.path.expanduser(text)) if text else Path(os.getcwd())
    try:
        trusted = remember(folder)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    agent = host.agent
    agent.refresh()
    host.out.note(f"a0: trusted {trusted} (and every folder below it); its extensions, tools, plugins and "
                  f"model settings are used from now on")
