"""`%load_ext a0nb` and the `%a0` / `%%a0` magic: a thin adapter over `Agent`. Subcommands are dispatched
through the table in `notebook/commands` (one small module per group); config is `A0`, output is `Output`."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Callable

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from a0nb.errors import A0Error, ConfigError
from a0nb.notebook.app_points import AppPoints
from a0nb.notebook.chat import ChatMode, keep_question_marks
from a0nb.notebook.commands import SUBCOMMANDS, get_magics, help_text
from a0nb.notebook.commands.parsing import interpolate, split_options
from a0nb.notebook.magic_config import A0
from a0nb.notebook.magic_output import Output

if TYPE_CHECKING:
    from a0nb.engine.agent import Agent

_TRANSFORMERS = (keep_question_marks.__name__, "a0nb_async_asks")


@magics_class
class A0Magics(Magics):
    """The `%a0` magic. State (agent, config, chat mode, completion hooks) lives on this instance; it is the
    `Host` that subcommands receive."""

    shell: Any  # IPython types it as optional; a registered magic always has its shell

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.options = A0(parent=shell)
        self.chat = ChatMode(shell)
        self.out = Output(shell)
        self.live_spec: str | None = None
        self.app = AppPoints(self)
        self._agent: Agent | None = None
        self._uninstall: Callable[[], None] | None = None
        self.options.observe(self._profile_changed, names=["profile"])
        self.options.observe(self._chat_changed, names=["chat"])

        def a0nb_async_asks(lines: list[str]) -> list[str]:
            from a0nb.notebook.commands.ask import awaitable_cell
            return awaitable_cell(self, lines)
        a0nb_async_asks.has_side_effects = True  # type: ignore[attr-defined]
        self._async_transformer = a0nb_async_asks

    # -- lifecycle ----------------------------------------------------------------------------
    def install(self) -> None:
        from a0nb.notebook.completion import install
        if self.options not in self.shell.configurables:
            self.shell.configurables.append(self.options)
        self._uninstall = install(self.shell, self)
        cleanup = self.shell.input_transformers_cleanup
        cleanup[:] = [t for t in cleanup if getattr(t, "__name__", "") not in _TRANSFORMERS]
        cleanup.append(self._async_transformer)
        cleanup.append(keep_question_marks)
        if self.options.chat:
            self.chat.enable()
        self.shell.events.register("post_run_cell", self.app.cell_ran)

    def uninstall(self) -> None:
        self.chat.disable()
        try:
            self.shell.events.unregister("post_run_cell", self.app.cell_ran)
        except ValueError:
            pass
        cleanup = self.shell.input_transformers_cleanup
        cleanup[:] = [t for t in cleanup if getattr(t, "__name__", "") not in _TRANSFORMERS]
        if self._uninstall is not None:
            self._uninstall()
            self._uninstall = None
        for obj in (self.options, self):
            while obj in self.shell.configurables:
                self.shell.configurables.remove(obj)
        if self._agent is not None:
            self._agent.shared.bridge.close()

    # -- the agent ----------------------------------------------------------------------------
    @property
    def agent(self) -> Agent:
        """The agent of this notebook, created on first use in the kernel's folder and namespace."""
        if self._agent is None:
            from a0nb.engine.agent import Agent
            agent = Agent(os.getcwd(), namespace=self.shell.user_ns)
            if self.options.profile != agent.profile:
                self.set_profile(agent, self.options.profile)
            from a0nb.notebook.approval import install
            install(agent, self.interactive)  # approval "ask": buttons in a front end, stdin elsewhere
            self._agent = agent
        self.sync(self._agent)
        return self._agent

    def sync(self, agent: Agent, **overrides: Any) -> None:
        """Write the `%config` layer into the agent (approval defaults to what the front end allows)."""
        layer = dict(self.options.explicit)
        if "approval" not in layer and not os.environ.get("A0NB_APPROVAL"):
            layer["approval"] = "ask" if self._stdin_allowed() else "deny"
        layer.update({k: v for k, v in overrides.items() if v is not None})
        if layer != agent.shared.magic_settings:
            agent.shared.magic_settings.clear()
            agent.shared.magic_settings.update(layer)

    def set_profile(self, agent: Agent, name: str) -> None:
        try:
            agent.set_profile(name)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None

    def _parent_content(self) -> dict[str, Any] | None:
        kernel = getattr(self.shell, "kernel", None)
        if kernel is None or not hasattr(kernel, "get_parent"):
            return None
        parent = kernel.get_parent() or {}
        content: dict[str, Any] = parent.get("content") or {}
        return content

    def _stdin_allowed(self) -> bool:
        content = self._parent_content()
        if content is None:
            return bool(getattr(sys.stdin, "isatty", lambda: False)())
        return bool(content.get("allow_stdin", False))

    def interactive(self) -> bool:
        """Live widgets only in a front end: a kernel whose request allows stdin (nbclient/nbval do not)."""
        if os.environ.get("A0NB_STATIC", "") not in ("", "0"):
            return False
        content = self._parent_content()
        return bool(content and content.get("allow_stdin", False))

    def _profile_changed(self, change: Any) -> None:
        if self._agent is not None and change["new"] != self._agent.profile:
            self.set_profile(self._agent, change["new"])

    def _chat_changed(self, change: Any) -> None:
        (self.chat.enable if change["new"] else self.chat.disable)()

    # -- the magic ----------------------------------------------------------------------------
    @no_var_expand
    @line_cell_magic
    def a0(self, line: str, cell: str | None = None) -> None:
        if cell is not None:
            from a0nb.notebook.commands.ask import ask_cell
            return self._guard(ask_cell, self, line, cell)
        name, _, rest = line.strip().partition(" ")
        if not name:
            print(help_text())
            return None
        sub, rest = SUBCOMMANDS.get(name), rest.strip()
        if sub is None:
            raise UsageError(f"unknown subcommand {name!r}; valid: {', '.join(SUBCOMMANDS)} (see %a0 help)")
        if rest in ("--help", "-h"):
            print(f"{sub.usage}\n    {sub.summary}")
            return None
        if sub.view:
            if rest:
                raise UsageError(f"{sub.usage} takes no arguments")
            from a0nb.notebook.commands.views import view
            return self._guard(view, self, sub.view)
        return self._guard(sub.handler(), self, rest)

    def _guard(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except UsageError:
            raise
        except A0Error as exc:
            self.out.error(exc)

    async def ask_awaitable(self, line: str, cell: str | None) -> None:
        """`%a0 ask` / `%%a0` awaited in the kernel's own loop (the cell transformer writes the call)."""
        from a0nb.notebook.commands.ask import run_awaited
        await run_awaited(self, line, cell)


A0Magics.a0.__doc__ = help_text()


# -- extension entry points --------------------------------------------------------------------------

def load(shell: Any) -> A0Magics:
    existing: A0Magics | None = get_magics(shell)
    if existing is not None:
        return existing
    magics = A0Magics(shell)
    shell.register_magics(magics)
    magics.install()
    magics.app.loaded()
    return magics


def unload(shell: Any) -> None:
    magics = get_magics(shell)
    if magics is None:
        return
    magics.uninstall()
    manager = shell.magics_manager
    for kind in ("line", "cell"):
        if getattr(manager.magics[kind].get("a0"), "__self__", None) is magics:
            manager.magics[kind].pop("a0")
    manager.registry.pop("A0Magics", None)


__all__ = ["A0", "A0Magics", "SUBCOMMANDS", "load", "unload", "get_magics", "interpolate", "split_options"]
