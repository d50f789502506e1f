"""`%a0 model`, `utility`, `profile`, `reset`, `chat`: settings of the notebook's agent."""
from __future__ import annotations

from IPython.core.error import UsageError

from a0nb.notebook.commands import Host


def model(host: Host, rest: str) -> None:
    _model(host, "model", "chat", rest)


def utility(host: Host, rest: str) -> None:
    _model(host, "utility_model", "utility", rest)


def _model(host: Host, trait: str, role: str, rest: str) -> None:
    if rest:
        setattr(host.options, trait, rest)
        if trait == "model":
            host.live_spec = None
    agent = host.agent
    spec = agent.model_spec(role)
    if rest and role == "chat":
        agent._warm()  # a real model: its library imports in the background while the user types
    host.out.note(f"{role} model: {spec or '(none configured)'}")


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
