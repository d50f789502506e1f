"""What files/extensions.py needs around one extension's call: the registrations mapping that reports every
change (so resolved chains are dropped), calling a registered function with the kwargs it takes, and error
wrapping (ext_chain.py runs a chain and attributes what each extension set)."""
from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Awaitable, Callable, Coroutine, Generator, Iterable

from a0nb.errors import ExtensionError, error_line

REGISTERED = "registered in the notebook"


class Registrations(dict):  # type: ignore[type-arg]
    """point -> {name: ExtensionInfo}, as registered from Python. Every change, through `register()` or straight
    on the mapping (`registered.clear()`, `registered[point].pop(name)`), calls `changed`."""

    def __init__(self, changed: Callable[[], None], items: Iterable[tuple[Any, Any]] = (), *, inner: bool = False) -> None:
        super().__init__()
        self._changed, self._inner = changed, inner
        for key, value in items:
            self[key] = value

    def _own(self, value: Any) -> Any:  # a point's own mapping reports its changes too
        if not self._inner and isinstance(value, dict) and not isinstance(value, Registrations):
            return Registrations(self._changed, value.items(), inner=True)
        return value

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, self._own(value))
        self._changed()

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        self._changed()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: Any, *default: Any) -> Any:
        value = super().pop(key, *default)
        self._changed()
        return value

    def popitem(self) -> tuple[Any, Any]:
        item = super().popitem()
        self._changed()
        return item

    def clear(self) -> None:
        super().clear()
        self._changed()

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __ior__(self, other: Any) -> "Registrations":  # type: ignore[misc]
        self.update(other)
        return self

    def __reduce__(self) -> Any:  # copies and pickles are plain dicts
        return (dict, (dict(self),))


# A process-wide cache, not state: a function's signature never changes, and a registered function is the key
# (bounded, so re-registered notebook functions do not pile up).
@functools.lru_cache(maxsize=512)
def _accepted(fn: Callable[..., Any]) -> tuple[bool, frozenset[str]]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True, frozenset()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return True, frozenset()
    return False, frozenset(p.name for p in params)


def call_subset(fn: Callable[..., Any], agent: Any, kwargs: dict[str, Any]) -> Any:
    """Registered functions may take any subset of the point's kwargs (and `agent`)."""
    takes_all, names = _accepted(fn)
    if takes_all:
        return fn(agent=agent, **kwargs)
    args = {}
    for name in names:  # (a loop, not a comprehension: no frame of its own on every call)
        if name in kwargs:
            args[name] = kwargs[name]
    if "agent" in names:
        args["agent"] = agent
    return fn(**args)


async def as_coro(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


@types.coroutine
def resume(coro: Coroutine[Any, Any, Any], pending: Any) -> Generator[Any, None, Any]:
    """Go on awaiting `coro`, already run to a suspension that yielded `pending`: hand `pending` to the task as
    `await` would have, then delegate as `await` does (what the task throws in, a cancellation, reaches `coro`)."""
    while True:
        try:
            yield pending
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # delivered to `coro`, which may handle it and suspend again
            try:
                pending = coro.throw(exc)
            except StopIteration as stop:
                return stop.value
            continue
        return (yield from coro)


def wrap(info: Any, point: str, exc: BaseException) -> ExtensionError:
    where = str(info.path) if info.path else f"{info.name} ({REGISTERED})"
    error = ExtensionError(f"extension {where} failed at point {point}: {type(exc).__name__}: {exc}")
    error.path, error.point = (str(info.path) if info.path else None), point
    if error.path is not None:
        error.line = error_line(exc, info.path)
    return error
