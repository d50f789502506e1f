"""Reuse of what is built from prompt renders (system-prompt sections, the tool catalogue): a result stands
while the prompt files are unchanged, its inputs compare equal and the variables loaders its renders ran
return what they did; so a step redoes only what changed."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Hashable, TypeVar

if TYPE_CHECKING:
    from a0nb.files.prompts import PromptEngine

__all__ = ["PromptMemo"]

T = TypeVar("T")


class PromptMemo:
    """One engine's reusable builds, by key. Active only when the engine's owner watches the prompt files
    (`trust_listings`): without that watch a reuse could miss an edit, so every call builds anew."""

    def __init__(self, engine: "PromptEngine") -> None:
        self._engine = engine
        self.active = False  # set with the engine's trust_listings
        self._version = engine.version
        self._entries: dict[Hashable, tuple[Any, Any, tuple[Any, ...]]] = {}

    def __call__(self, key: Hashable, inputs: Any, build: Callable[[], T]) -> T:
        """`build()`, or its earlier result when the files, `inputs` (everything `build` reads besides prompt
        renders, compared with ==) and the renders' variables loaders are as they were then."""
        engine = self._engine
        if not self.active:
            return build()
        if self._version != engine.version:  # a prompt file, a folder or the hierarchy changed
            self._entries.clear()
            self._version = engine.version
        hit = self._entries.get(key)
        if hit is not None and hit[0] == inputs and (not hit[2] or all(engine.vars_unchanged(*r) for r in hit[2])):
            if engine.recording is not None:  # a build inside another one: the outer one rechecks these too
                engine.recording.extend(hit[2])
            return hit[1]  # type: ignore[no-any-return]
        outer, engine.recording = engine.recording, []
        try:
            value = build()
        finally:
            renders, engine.recording = engine.recording, outer
        if outer is not None:
            outer.extend(renders)
        if None not in renders:  # every render it made is reusable (cached, no recently written file)
            self._entries[key] = (inputs, value, tuple(r for r in renders if r))
        return value
