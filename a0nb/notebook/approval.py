"""The notebook's approver for `approval = "ask"`: Allow / Deny / Allow for this turn buttons under the code,
shown once, syntax-highlighted and with secrets masked. In a live front end the agent's loop awaits the approver
as a task on the kernel's own event loop (`on_loop`, see `Bridge.on_main`): the cell is awaiting the turn, so
the loop stays free and ipykernel delivers the click to the button while the cell runs. (jupyter-ui-poll, the
usual way to read widget events from a busy cell, needs `Kernel.do_one_iteration`, which ipykernel 7 no longer
has.) Elsewhere — a script, terminal IPython, or `agent.ask()` blocking inside a longer cell — it asks on stdin.
Once decided, the buttons give way to one line naming the decision: all the saved notebook keeps of it."""
from __future__ import annotations

import asyncio
from typing import Any, Callable

from a0nb.inspector import html as h

CHOICES = (("Allow", "allow", "success"), ("Deny", "deny", "danger"), ("Allow for this turn", "turn", "warning"))
WORDS = {"allow": "allowed", "deny": "denied", "turn": "allowed for the rest of this turn"}


def highlighted(code: str, runtime: str) -> str:
    """The code as HTML with inline colours (pygments ships with IPython); plain <pre> if it cannot."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import BashLexer, PythonLexer
    except ImportError:  # pragma: no cover - pygments is an IPython dependency
        return h.pre(code)
    lexer = PythonLexer() if runtime == "python" else BashLexer()
    body = highlight(code, lexer, HtmlFormatter(noclasses=True, nowrap=True, style="default"))
    return (f'<pre class="a0-approve-code" style="{h.MONO};white-space:pre-wrap;margin:4px 0;padding:6px 8px;'
            f'border:1px solid {h.LINE};border-radius:6px;background:#f8f8f8;color:#1f2328">{body}</pre>')


def decision_line(runtime: str, choice: str) -> tuple[str, str]:
    """What stays in the output: text/plain and text/html of the decision."""
    text = f"a0nb: {runtime} code {WORDS[choice]}"
    kind = "error" if choice == "deny" else "ok"
    return text, f'<div class="a0-decision" style="{h.FONT}">{h.badge(WORDS[choice], kind)} {h.esc(runtime)} code</div>'


class NotebookApprover:
    """`agent.shared.approver(runtime, code) -> bool`; `on_loop` is the same decision awaited on the kernel's loop."""

    def __init__(self, interactive: Callable[[], bool], mask: Callable[[str], str], turn: Callable[[], int]) -> None:
        self.interactive, self.mask, self.turn = interactive, mask, turn
        self.allowed_turn: int | None = None   # "Allow for this turn": the turn number it holds for

    def __call__(self, runtime: str, code: str) -> bool:
        """The blocking form (the kernel's loop is busy, or there is none): a text prompt."""
        return self._decide(lambda: self._stdin(runtime, code))

    async def on_loop(self, runtime: str, code: str) -> bool:
        """Awaited on the kernel's running loop: buttons in a widget front end, else the text prompt."""
        if self.allowed_turn is not None and self.allowed_turn == self.turn():
            return True
        if not (self.interactive() and _have_widgets()):
            return self(runtime, code)
        choice = await self._widget(runtime, code)
        return self._decide(lambda: choice)

    def _decide(self, ask: Callable[[], str]) -> bool:
        turn = self.turn()
        if self.allowed_turn is not None and self.allowed_turn == turn:
            return True
        choice = ask()
        if choice == "turn":
            self.allowed_turn = turn
        return choice in ("allow", "turn")

    # -- front ends -----------------------------------------------------------------------------------
    async def _widget(self, runtime: str, code: str) -> str:
        import ipywidgets as w
        from IPython.display import HTML, display

        decided: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        title = w.HTML(f'<div style="{h.FONT}">{h.badge("approval", "warning")}'
                       f'The agent wants to run this {h.esc(runtime)} code:</div>' + highlighted(self.mask(code), runtime))
        buttons = []
        for label, value, style in CHOICES:
            button = w.Button(description=label, button_style=style, layout=w.Layout(width="auto"))
            button.on_click(lambda _b, v=value: _settle(decided, v))
            buttons.append(button)
        box = w.VBox([title, w.HBox(buttons)])
        box.add_class("a0-approval")
        handle = display(box, display_id=True)
        choice = "deny"
        try:
            choice = await decided
        finally:  # also when the turn is interrupted while waiting: then the code was not run
            text, html = decision_line(runtime, choice)
            if handle is not None:
                handle.update(HTML(html), metadata={"a0nb": {"decision": choice}})
            for widget in (*buttons, title, box):
                widget.close()
        return choice

    def _stdin(self, runtime: str, code: str) -> str:
        print(f"a0nb: the agent wants to run this {runtime} code:\n{self.mask(code)}")
        try:
            answer = input("Allow? [y]es / [N]o / [t]his turn: ").strip().lower()
        except (EOFError, RuntimeError):  # no stdin: a headless run refuses
            answer = ""
        choice = {"y": "allow", "yes": "allow", "t": "turn", "turn": "turn"}.get(answer, "deny")
        print(decision_line(runtime, choice)[0])
        return choice


def _settle(decided: "asyncio.Future[str]", choice: str) -> None:
    if not decided.done():  # the first click decides; a double click changes nothing
        decided.set_result(choice)


def _have_widgets() -> bool:
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


def install(agent: Any, interactive: Callable[[], bool]) -> NotebookApprover:
    """Make the notebook's approver the agent's (and its subordinates', which share `agent.shared`)."""
    approver = NotebookApprover(interactive, lambda s: str(agent.mask(s)), lambda: len(agent.turns))
    agent.shared.approver = approver
    return approver


__all__ = ["NotebookApprover", "install", "highlighted", "decision_line"]
