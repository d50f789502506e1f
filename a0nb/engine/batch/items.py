"""The items of a batch and the prompt each one gets: input checks (empty, huge, a template without
`{item}`, pandas tables as rows) with errors that say how to fix them."""
from __future__ import annotations

import string
from typing import Any, Callable, Iterable, Sequence, Union

from a0nb.errors import ConfigError

__all__ = ["MAX_PROMPT_CHARS", "Template", "as_items", "prompts"]

Template = Union[str, Callable[[Any], str]]
# A prompt longer than this is almost surely a mistake (a whole file or table formatted into one message):
# ~50k tokens, more than many models' windows once the system prompt is added. Raise it with max_prompt_chars=.
MAX_PROMPT_CHARS = 200_000


def as_items(items: Any) -> list[Any]:
    """A list of items from a list, tuple, range, generator, pandas Series (values) or DataFrame (rows as dicts)."""
    if isinstance(items, (str, bytes)):
        raise ConfigError("map: items is a single string; pass a list of items (for example text.splitlines())")
    if isinstance(items, dict):
        raise ConfigError("map: items is a dict; pass list(d.items()), list(d.values()) or list(d)")
    out: list[Any]
    if hasattr(items, "to_dict") and hasattr(items, "iterrows"):  # a pandas DataFrame: one item per row
        out = items.to_dict("records")
    elif hasattr(items, "tolist") and hasattr(items, "index"):  # a pandas Series
        out = items.tolist()
    elif isinstance(items, Iterable):
        out = list(items)
    else:
        raise ConfigError(f"map: items must be a list (or any iterable), not {type(items).__name__}")
    if not out:
        raise ConfigError("map: items is empty; there is nothing to run")
    return out


def _check_template(template: str) -> None:
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise ConfigError(f"map: the template is not a valid format string ({exc}); write literal braces as "
                          "{{ and }}") from None
    roots = {f.split(".", 1)[0].split("[", 1)[0] for f in fields}
    other = sorted(r for r in roots if r != "item")
    if other:
        shown = ", ".join("{" + (r or "") + "}" for r in other)
        raise ConfigError(f"map: the template uses {shown}; only {{item}} (with .attr or [key]) is filled in. "
                          "Write literal braces as {{ and }}")
    if "item" not in roots:
        raise ConfigError("map: the template has no {item} placeholder, so every item would get the same prompt; "
                          "write for example \"Summarise: {item}\" (or pass a function item -> prompt)")


def prompts(items: Sequence[Any], template: Template, max_prompt_chars: int = MAX_PROMPT_CHARS) -> list[str]:
    """One prompt per item, checked before anything runs (a bad item fails the whole call, naming its index)."""
    if isinstance(template, str):
        _check_template(template)
        make: Callable[[Any], str] = lambda item: template.format(item=item)  # noqa: E731
    elif callable(template):
        make = template
    else:
        raise ConfigError(f"map: template must be a string with {{item}} or a function item -> prompt, "
                          f"not {type(template).__name__}")
    out = []
    for i, item in enumerate(items):
        try:
            text = make(item)
        except (KeyError, IndexError, AttributeError) as exc:
            raise ConfigError(f"map: item {i} ({_short(item)}) does not fit the template: "
                              f"{type(exc).__name__}: {exc}") from None
        if not isinstance(text, str):
            raise ConfigError(f"map: the template function returned {type(text).__name__} for item {i}; "
                              "it must return the prompt as a str")
        if not text.strip():
            raise ConfigError(f"map: item {i} ({_short(item)}) gives an empty prompt")
        if len(text) > max_prompt_chars:
            raise ConfigError(f"map: item {i} makes a prompt of {len(text):,} characters (limit "
                              f"{max_prompt_chars:,}); pass a shorter item (a path or an excerpt the agent can "
                              "read) or raise the limit with max_prompt_chars=")
        out.append(text)
    return out


def _short(item: Any, limit: int = 60) -> str:
    try:
        text = repr(item)
    except Exception:  # noqa: BLE001 - only a label in an error message
        text = f"<{type(item).__name__}>"
    return text if len(text) <= limit else text[:limit - 1] + "…"
