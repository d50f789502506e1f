"""What the `%a0` magic shows: bundles published with volatile values under the `a0` metadata key, the
answer formats, errors as one line, and the inspector's renderings imported on first use."""
from __future__ import annotations

import html
import importlib
import json
import re
from typing import Any

from a0nb.errors import A0Error

_FENCE = re.compile(r"```[\w+-]*\n(.*?)```", re.S)
CODE_NOTE = "a0: the answer's code was inserted as the next cell"


class Output:
    """Publishes through one shell's display publisher (so any shell works, not only the singleton)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def publish(self, obj: Any, metadata: dict[str, Any] | None = None) -> None:
        """Display a rendering object (or a raw mime bundle), merging `metadata` under `a0`."""
        if isinstance(obj, dict):
            data, md = obj, {}
        else:
            data, md = self.shell.display_formatter.format(obj)
        md = dict(md or {})
        if metadata:
            md["a0"] = {**(md.get("a0") or {}), **metadata}
        self.shell.display_pub.publish(data=data, metadata=md)

    def error(self, exc: BaseException) -> None:
        """One line of text/plain; the rest of a long message folds away in the HTML."""
        data, meta = error_bundle(exc)
        self.publish(data, meta)

    def note(self, text: str) -> None:
        self.publish({"text/plain": text, "text/html": f"<pre>{html.escape(text)}</pre>"})

    def answer(self, turn: Any, fmt: str, meta: dict[str, Any], live_shown: bool) -> None:
        """`markdown` is the turn card (already there when the live view finished); the rest show the answer."""
        text = turn.text
        if fmt == "markdown":
            if not live_shown:
                self.publish(render("render_turn", turn), meta)
        elif fmt == "text":
            self.publish({"text/plain": text}, meta)
        elif fmt == "html":
            self.publish({"text/html": render("sanitize_html", text), "text/plain": text}, meta)
        elif fmt == "json":
            self._json(text, meta)
        else:
            self.shell.set_next_input(code_of(text), replace=False)
            self.publish({"text/plain": CODE_NOTE, "text/html": f"<i>{CODE_NOTE} ⬇</i>"}, meta)

    def _json(self, text: str, meta: dict[str, Any]) -> None:
        for candidate in (text, code_of(text)):
            try:
                value = json.loads(candidate)
            except ValueError:
                continue
            self.publish({"application/json": value if isinstance(value, (dict, list)) else {"value": value},
                          "text/plain": json.dumps(value, indent=2, ensure_ascii=False)}, meta)
            return
        self.error(A0Error("the answer is not JSON (ask again, or use -f text)"))


_TICKS = re.compile(r"`([^`\n]+)`")
PLAIN_MORE = 200  # characters of the folded rest a one-line error shows after a line ending in ":"


def error_bundle(exc: BaseException) -> tuple[dict[str, str], dict[str, Any]]:
    """An error as one line of text/plain and HTML (a long message's rest folded away), its name in metadata."""
    name = type(exc).__name__
    first, _, more = (str(exc).strip() or name).partition("\n")
    extra = f"<details><summary>details</summary><pre>{html.escape(more)}</pre></details>" if more.strip() else ""
    plain = first
    if first.endswith(":") and more.strip():  # (a line that announces what follows: its start, on the same line)
        rest = " ".join(more.split())
        plain = f"{first} {rest[:PLAIN_MORE]}" + ("…" if len(rest) > PLAIN_MORE else "")
    return ({"text/plain": f"{name}: {plain}",
             "text/html": f'<div class="a0-error" style="color:var(--jp-error-color1,#b00020)">'
                          f"<b>{html.escape(name)}</b>: {inline_code(first)}{extra}</div>"}, {"error": name})


def inline_code(text: str) -> str:
    """Escaped text whose `backticked` spans become <code> (messages name commands that way)."""
    return _TICKS.sub(r"<code>\1</code>", html.escape(text))


def turn_metadata(agent: Any, turn: Any) -> dict[str, Any]:
    """Volatile facts of a turn (they go to output metadata, never into the rendered text)."""
    calls = list(turn.calls)
    tokens = sum(int(c.usage.get("total_tokens", 0) or 0) for c in calls)
    costs = [c.cost for c in calls if c.cost is not None]
    return {"turn": turn.index, "model": agent.model_spec("chat"), "calls": len(calls), "tokens": tokens,
            "latency": round(sum(c.latency or 0.0 for c in calls), 4), "cost": sum(costs) if costs else None}


def code_of(answer: str) -> str:
    """The first fenced code block of an answer, else the whole answer."""
    m = _FENCE.search(answer)
    return (m.group(1) if m else answer).rstrip("\n")


# -- the inspector, imported on first use (so `%load_ext a0nb` stays fast) ---------------------------

def render(name: str, *args: Any) -> Any:
    """Call `a0nb.inspector.<name>(*args)`: the renderings of call records, turns and agent views."""
    return getattr(importlib.import_module("a0nb.inspector"), name)(*args)


__all__ = ["Output", "render", "turn_metadata", "code_of"]
