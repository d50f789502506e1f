"""`%a0 model`, `utility`, `profile`, `reset`, `chat`: settings of the notebook's agent."""
from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from a0nb.notebook.commands import Host
from a0nb.settings import model_config_file, presets


def model(host: Host, rest: str) -> None:
    _model(host, "model", "chat", rest)


def utility(host: Host, rest: str) -> None:
    _model(host, "utility_model", "utility", rest)


def _model(host: Host, trait: str, role: str, rest: str) -> None:
    if role == "chat" and (rest == "preset" or rest.startswith("preset ")):
        return _preset(host, rest[len("preset"):].strip())
    if rest:
        setattr(host.options, trait, rest)
        if trait == "model":
            host.live_spec = None
    agent = host.agent
    spec = agent.model_spec(role)
    if rest and role == "chat":
        agent._warm()  # a real model: its library imports in the background while the user types
    host.out.note(f"{role} model: {spec or '(none configured)'}{_source(agent)}")


def _source(agent: Any) -> str:
    """Where the model settings come from, when the `_model_config` plugin gives them."""
    preset = agent.settings.preset
    if preset:
        found = presets(agent.workdir, agent.hierarchy.home, agent.diagnostics).get(preset)
        return f" (preset {preset}" + (f", {found[1]})" if found else ": not defined)")
    config = model_config_file(agent.workdir, [p for r, p in agent.hierarchy.dirs() if r.kind.endswith("profile")],
                               agent.hierarchy.home)
    return f" (_model_config: {config})" if config is not None else ""


def _preset(host: Host, name: str) -> None:
    """`%a0 model preset [NAME|none]`: list the `_model_config` presets, or choose one for this notebook."""
    agent = host.agent
    known = presets(agent.workdir, agent.hierarchy.home, agent.diagnostics)
    if name:
        if name != "none" and name not in known:
            raise UsageError(f"no model preset {name!r}; defined: {', '.join(sorted(known)) or 'none'} "
                             "(in .a0proj/plugins/_model_config/presets.yaml or the user's)")
        host.options.preset = None if name == "none" else name
        host.live_spec = None
        agent = host.agent
    active = agent.settings.preset
    lines = [f"{'*' if n == active else ' '} {n:<14} {path}" for n, (_entry, path) in sorted(known.items())]
    host.out.note("model presets (* = active):\n" + ("\n".join(lines) or "  (none defined)")
                  + f"\nchat model: {agent.model_spec('chat') or '(none configured)'}{_source(agent)}")


def profile(host: Host, rest: str) -> None:
    agent = host.agent
    if rest:
        host.set_profile(agent, rest)
        host.options.profile = rest
    lines = [f"{'*' if n == agent.profile else ' '} {n:<14} {p.title or p.description}".rstrip()
             for n, p in agent.profiles().items()]
    host.out.note("profiles (* = active):\n" + "\n".join(lines))


def reset(host: Host, rest: str) -> None:
    host.agent.reset()
    host.out.note("a0: the conversation was reset")


def chat(host: Host, rest: str) -> None:
    if rest not in ("on", "off"):
        raise UsageError("usage: %a0 chat on|off")
    host.options.chat = rest == "on"
    on = "on — a plain cell is a message; %%python runs code"
    host.out.note("a0: chat mode " + (on if rest == "on" else "off"))
