"""Split <think>…</think> / <reasoning>…</reasoning> off a streamed reply when the provider has no
reasoning channel. Owns ThinkSplitter (streaming) and split_think (whole text)."""
from __future__ import annotations

import re

__all__ = ["ThinkSplitter", "split_think"]

_TAGS = (("<think>", "</think>"), ("<reasoning>", "</reasoning>"))
# ASCII-only lowering keeps indices aligned (str.lower can change a string's length).
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_LEADING_BLANK = re.compile(r"\s*")


class ThinkSplitter:
    """Feed response chunks; get (reasoning_delta, response_delta) back.

    Only a tag at the very start (after whitespace) opens reasoning; after its closing tag, and after
    any text that does not start with a tag, everything is response. Text that might be the start of
    a tag is held back until the next chunk or `flush`.
    """

    def __init__(self) -> None:
        self._state = "start"  # start -> reasoning -> gap -> response, or start -> response
        self._held = ""
        self._close = ""

    def feed(self, chunk: str) -> tuple[str, str]:
        text, self._held = self._held + chunk, ""
        if self._state == "start":
            return self._opening(text)
        if self._state == "reasoning":
            return self._inside(text)
        if self._state == "gap":
            return "", self._after_close(text)
        return "", text

    @property
    def passing(self) -> bool:
        """Past the opening: every further chunk is response, unchanged (and nothing is held)."""
        return self._state == "response"

    def flush(self) -> tuple[str, str]:
        """End of stream: an unclosed tag's text is reasoning; a held non-tag is response."""
        held, self._held = self._held, ""
        if self._state == "reasoning":
            return held, ""
        if self._state == "start":
            self._state = "response"
            return "", held
        return "", ""

    def _opening(self, text: str) -> tuple[str, str]:
        body = text[_LEADING_BLANK.match(text).end():]  # type: ignore[union-attr]
        lowered = body.translate(_LOWER)
        for open_tag, close_tag in _TAGS:
            if lowered.startswith(open_tag):
                self._state, self._close = "reasoning", close_tag
                return self._inside(body[len(open_tag):])
        if not body or any(open_tag.startswith(lowered) for open_tag, _ in _TAGS):
            self._held = text
            return "", ""
        self._state = "response"
        return "", text

    def _inside(self, text: str) -> tuple[str, str]:
        lowered = text.translate(_LOWER)
        at = lowered.find(self._close)
        if at >= 0:
            self._state = "gap"
            return text[:at], self._after_close(text[at + len(self._close):])
        keep = _partial_tag_suffix(lowered, self._close)
        self._held = text[len(text) - keep:] if keep else ""
        return text[:len(text) - keep], ""

    def _after_close(self, text: str) -> str:
        """Whitespace between the closing tag and the answer is dropped."""
        text = text.lstrip()
        if text:
            self._state = "response"
        return text


def _partial_tag_suffix(lowered: str, tag: str) -> int:
    """Length of the longest end of `lowered` that could be the start of `tag`."""
    for size in range(min(len(tag) - 1, len(lowered)), 0, -1):
        if lowered.endswith(tag[:size]):
            return size
    return 0


def split_think(text: str) -> tuple[str, str]:
    """(reasoning, response) for a whole reply; the same as feeding it to a ThinkSplitter."""
    splitter = ThinkSplitter()
    reasoning, response = splitter.feed(text)
    rest_reasoning, rest_response = splitter.flush()
    return reasoning + rest_reasoning, response + rest_response
