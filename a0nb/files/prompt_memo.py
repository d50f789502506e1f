"""Reuse of renders and of what is built from them (system-prompt sections, the tool catalogue): a result
stands while the prompt files are unchanged, its inputs compare equal and the variables loaders its
renders ran return what they did; so a step redoes only what changed."""
from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Hashable, TypeVar

from a0nb.files.prompt_lookup import RACY_NS, stat_key

if TYPE_CHECKING:
    from a0nb.files.prompts import PromptEngine
    from a0nb.files.rendered import Rendered

__all__ = ["MISS", "PromptMemo", "RenderCache", "render_key"]

T = TypeVar("T")
_SIZE = 512
_DERIVED = 64
_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)
MISS: Any = object()  # what PromptMemo.lookup returns when nothing is kept
Loaded = tuple[tuple[Path, Path, str, dict[str, Any]], ...]  # each loader a render ran: (.py, .md, name, result)
Entry = tuple[tuple[tuple[Path, tuple[int, int] | None], ...], "Rendered", Loaded]


def render_key(name: str, kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    """(name, then each kwarg's name, class and value), None unless every value is a scalar: 1, 1.0 and
    True render differently."""
    key: list[Any] = [name]
    for k, v in kwargs.items():
        cls = v.__class__
        if cls not in _SCALAR_TYPES and not isinstance(v, _SCALARS):
            return None
        key += (k, cls, v)
    return tuple(key)


class RenderCache:
    """Renders by `render_key`, each with the (mtime, size) of every file it read and its loaders' results."""

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, ...], Entry] = {}

    def clear(self) -> None:
        self._entries.clear()

    def get(self, key: tuple[Any, ...], trusted: bool) -> Entry | None:
        """The entry while its files are unchanged (`trusted`: the owner watches them, no stat needed)."""
        hit = self._entries.get(key)
        if hit is None or trusted or all(stat_key(p) == k for p, k in hit[0]):
            return hit
        return None

    def remember(self, key: tuple[Any, ...], rendered: "Rendered", loaded: list[Any]) -> bool:
        """Cache a render whose output depends only on its files, its kwargs and what its variables loaders
        returned (they run again on every lookup), valid while every file it read keeps its (mtime, size);
        recently written files are never trusted (False: not cached)."""
        now = time.time_ns()
        stamps = []
        for source in rendered.sources:
            k = stat_key(source.path)
            if k is None or now - k[0] < RACY_NS:
                return False
            stamps.append((source.path, k))
        if len(self._entries) >= _SIZE:
            self._entries.pop(next(iter(self._entries)))
        self._entries[key] = (tuple(stamps), rendered, tuple(loaded))
        return True


class PromptMemo:
    """One engine's reusable builds, by key. Active only when the engine's owner watches the prompt files
    (`trust_listings`): without that watch a reuse could miss an edit, so every call builds anew."""

    def __init__(self, engine: "PromptEngine") -> None:
        self._engine = engine
        self.active = False  # set with the engine's trust_listings
        self._version = engine.version
        self._entries: dict[Hashable, tuple[Any, Any, tuple[Any, ...]]] = {}
        self._derived: dict[int, tuple[Any, Any, Any]] = {}  # id(value) -> (value, make, make(value))

    def derived(self, value: Any, make: Callable[[Any], T]) -> T:
        """`make(value)`, the same object again while `value` is the very object it was made from (a reused
        build: e.g. the `Section` of a reused `Rendered`, so the composer sees the same section too)."""
        hit = self._derived.get(id(value))
        if hit is not None and hit[0] is value and hit[1] is make:
            return hit[2]  # type: ignore[no-any-return]
        made = make(value)
        if len(self._derived) >= _DERIVED:
            self._derived.clear()
        self._derived[id(value)] = (value, make, made)  # (holding `value` keeps its id from being reused)
        return made

    def __call__(self, key: Hashable, inputs: Any, build: Callable[[], T]) -> T:
        """`build()`, or its earlier result when the files, `inputs` (everything `build` reads besides prompt
        renders, compared with ==) and the renders' variables loaders are as they were then."""
        if not self.active:
            return build()
        hit = self.lookup(key, inputs)
        if hit is not MISS:
            return hit  # type: ignore[no-any-return]
        outer = self.begin()
        try:
            value = build()
        finally:
            renders = self.end(outer)
        self.store(key, inputs, value, renders)
        return value

    def lookup(self, key: Hashable, inputs: Any) -> Any:
        """The value kept for `key` while the files, `inputs` and its renders' variables loaders are as they
        were when it was stored; MISS otherwise."""
        engine = self._engine
        if self._version != engine.version:  # a prompt file, a folder or the hierarchy changed
            self._entries.clear()
            self._version = engine.version
        hit = self._entries.get(key)
        if hit is not None and hit[0] == inputs and (not hit[2] or all(engine.vars_unchanged(*r) for r in hit[2])):
            if engine.recording is not None:  # a build inside another one: the outer one rechecks these too
                engine.recording.extend(hit[2])
            return hit[1]
        return MISS

    def begin(self) -> list[Any] | None:
        """Start recording the renders of a build (`end` stops it, given what this returned)."""
        engine = self._engine
        outer, engine.recording = engine.recording, []
        return outer

    def end(self, outer: list[Any] | None) -> list[Any]:
        """Stop recording: the renders made since `begin` (handed on to an enclosing build too)."""
        engine = self._engine
        renders, engine.recording = engine.recording or [], outer
        if outer is not None:
            outer.extend(renders)
        return renders

    def store(self, key: Hashable, inputs: Any, value: Any, renders: list[Any]) -> None:
        """Keep `value` for `key` if every render it made is reusable (cached, no recently written file)."""
        if None not in renders:
            self._entries[key] = (inputs, value, tuple(r for r in renders if r))
