"""`%a0 plugins [enable NAME | disable NAME [--scope S] | config NAME [key=value ...]]`."""
from __future__ import annotations

from IPython.core.error import UsageError

from a0nb.notebook.commands import SUBCOMMANDS, Host
from a0nb.notebook.commands.parsing import Parser, split_words
from a0nb.notebook.commands.views import view


def plugins(host: Host, rest: str) -> None:
    from a0nb.notebook.plugin_admin import PluginAdmin
    admin = PluginAdmin(host.agent)
    words = split_words("%a0 plugins", rest)
    action, args = (words[0], words[1:]) if words else ("list", [])
    if action == "list" and not args:
        view(host, "render_plugins")
    elif action in ("enable", "disable"):
        name, scope = _plugin_and_scope(action, args)
        host.out.note(admin.switch(name, action == "enable", scope))
    elif action == "config" and args:
        name, assignments = args[0], args[1:]
        if assignments:
            host.out.note(admin.set_config(name, assignments))
        elif host.interactive():
            host.out.publish(admin.form(name).view)
        else:
            host.out.publish(admin.config_view(name))
    else:
        raise UsageError(f"usage: {SUBCOMMANDS['plugins'].usage}")


def _plugin_and_scope(action: str, args: list[str]) -> tuple[str, str]:
    p = Parser(prog=f"%a0 plugins {action}", add_help=False)
    p.add_argument("name")
    p.add_argument("--scope", choices=("notebook", "user"), default="notebook")
    opts = p.parse_args(args)
    return opts.name, opts.scope
