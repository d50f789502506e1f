"""Subcommands that show the agent: the inspector's views, `extensions [POINT]`, `template NAME`, `help`."""
from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from a0nb.notebook.commands import Host, help_text
from a0nb.notebook.magic_output import render


def view(host: Host, name: str, *args: Any) -> None:
    """Publish `a0nb.inspector.<name>(agent, *args)`."""
    host.out.publish(render(name, host.agent, *args))


def extensions(host: Host, rest: str) -> None:
    from a0nb.files.points import POINTS, is_known
    if rest and not is_known(rest):
        raise UsageError(f"%a0 extensions: unknown point {rest!r}; points: {', '.join(POINTS)}")
    view(host, "render_extensions", rest or None)


def tools(host: Host, rest: str) -> None:
    name = rest.strip()
    if name and host.agent.tools.resolve(name) is None:
        known = ", ".join(host.agent.tools.available()) or "none"
        raise UsageError(f"%a0 tools: no tool {name!r}; tools: {known}")
    view(host, "render_tools", name or None)


def template(host: Host, rest: str) -> None:
    from a0nb.files.features import features, find_template
    agent = host.agent
    agent.refresh()
    found = features(agent)
    if not rest:
        names = ", ".join(f"{f.name} ({f.root_label})" for f in found) or "none"
        host.out.note(f"usage: %a0 template NAME — feature plugins found (features/*.py): {names}")
        return
    hit = find_template(agent, rest)
    if hit is None:
        where = ", ".join(f.name for f in found) or "no feature plugins (features/*.py) in the hierarchy"
        raise UsageError(f"%a0 template: no template {rest!r} ({where})")
    text, feature = hit
    host.shell.set_next_input(text, replace=False)
    host.out.note(f"a0: template {rest} from {feature.name} ({feature.root_label}) inserted as the next cell")


def help(host: Host, rest: str) -> None:
    print(help_text())
