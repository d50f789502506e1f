"""Approval of model-written code, enforced by the loop (not by the tool that runs it).

The policy (`approval` setting: auto / ask / deny) and the approver (`agent.shared.approver(runtime, code)
-> bool`, a front end's Allow/Deny prompt; default: a y/N question on stdin, refused when nobody can answer)
are read once when a turn starts and kept in a context variable that the turn's tasks, subordinates and
jobs inherit. Code the agent runs during the turn — setting `A0NB_APPROVAL=auto`, `%config A0.approval`,
rewriting `tools/code_execution.py`, replacing `shared.approver` — changes nothing until the next turn.

Which requests need approval is decided here by the tool's name (the code tools), whatever file provides
the tool, after the `tool_execute_before` extensions had their say (the approved arguments are the ones run)."""
from __future__ import annotations

import contextvars
from dataclasses import dataclass
from typing import Any, Callable, Mapping

Approver = Callable[[str, str], bool]

# tools whose arguments are code to run (a0nb's name and Agent Zero's)
CODE_TOOLS = frozenset({"code_execution", "code_execution_tool"})
_RUNTIME_ALIASES = {"shell": "terminal", "bash": "terminal", "sh": "terminal", "py": "python"}


@dataclass(frozen=True)
class Policy:
    mode: str
    approver: Approver | None


_POLICY: contextvars.ContextVar[Policy | None] = contextvars.ContextVar("a0nb_approval", default=None)


def snapshot(agent: Any) -> Policy:
    return Policy(str(agent.settings.approval), agent.shared.approver)


def begin(agent: Any) -> contextvars.Token[Policy | None]:
    """At a turn's start: fix the policy for this turn (and what it starts)."""
    return _POLICY.set(snapshot(agent))


def end(token: contextvars.Token[Policy | None]) -> None:
    _POLICY.reset(token)


def current(agent: Any) -> Policy:
    """The running turn's policy (a monologue started outside a turn reads the agent's now)."""
    return _POLICY.get() or snapshot(agent)


def ask_on_stdin(runtime: str, code: str) -> bool:
    """The default approver for `ask`: a y/N prompt (an input box in a notebook front end); no one to ask → no."""
    try:
        answer = input(f"a0nb: run this {runtime} code?\n{code}\n[y/N] ")
    except (EOFError, RuntimeError, NotImplementedError, OSError):  # no stdin: a headless run refuses
        return False
    return answer.strip().lower() in ("y", "yes")


def gated(tool_name: str) -> bool:
    """Whether a request for this tool needs `approved` (a code tool); every other request is allowed."""
    return tool_name in CODE_TOOLS


def request_code(tool_name: str, method: str | None, args: Mapping[str, Any]) -> tuple[str, str] | None:
    """(runtime, code) when the request runs code and so needs approval, else None."""
    if tool_name not in CODE_TOOLS:
        return None
    runtime = str(method or args.get("runtime") or "python").strip().lower()
    return _RUNTIME_ALIASES.get(runtime, runtime), str(args.get("code", ""))


async def approved(agent: Any, tool_name: str, method: str | None, args: Mapping[str, Any]) -> tuple[bool, str, str]:
    """(allowed, runtime, policy mode) for one tool request under the turn's policy."""
    policy = current(agent)
    wanted = request_code(tool_name, method, args)
    if wanted is None:
        return True, "", policy.mode
    runtime, code = wanted
    if not code.strip() or policy.mode == "auto":
        return True, runtime, policy.mode  # empty code: the tool itself says what is missing
    if policy.mode != "ask":
        return False, runtime, policy.mode
    approver = policy.approver or ask_on_stdin
    return bool(await agent.run_on_main(approver, runtime, agent.mask(code))), runtime, policy.mode


__all__ = ["CODE_TOOLS", "Policy", "approved", "ask_on_stdin", "begin", "current", "end", "gated", "request_code"]
