"""`@extensible`: the implicit `_functions/<module>/<qualname>/start|end` points of a decorated function,
fired through the extension registry of the agent the call is given (an `agent=` or positional argument)."""
from __future__ import annotations

import abc
import functools
import inspect
from types import MappingProxyType
from typing import Any, Callable, Mapping, TypeVar, cast

__all__ = ["PointRegistry", "extensible", "function_point"]

F = TypeVar("F", bound=Callable[..., Any])
_UNSET: Any = object()


class PointRegistry(abc.ABC):
    """What `@extensible` needs of an agent's `.extensions` (implemented by `files.extensions.Extensions`)."""

    @abc.abstractmethod
    def resolve(self, point: str) -> list[Any]: ...

    @abc.abstractmethod
    async def call(self, point: str, agent: Any, **kwargs: Any) -> None: ...

    @abc.abstractmethod
    def call_sync(self, point: str, agent: Any, **kwargs: Any) -> None: ...

    # base -> has a start or end extension, as far as known (read first by `@extensible`; a registry keeping
    # one must keep it true: entries only for what has not changed since)
    hooks: Mapping[str, bool] = MappingProxyType({})

    def hooked(self, base: str) -> bool:
        """Whether `base/start` or `base/end` has any extension."""
        return bool(self.resolve(base + "/start") or self.resolve(base + "/end"))


# Classes seen to be PointRegistry implementations: `isinstance` on an ABC costs a Python-level call, and the
# check runs on every call of an extensible function
_REGISTRIES: set[Any] = set()


# a0nb modules whose extensible functions keep Agent Zero's point names (`_functions/agent/Agent/monologue/...`)
UPSTREAM_MODULE_NAMES: Mapping[str, str] = MappingProxyType({"a0nb.engine.agent": "agent"})


def function_point(fn: Callable[..., Any]) -> str:
    """The implicit point name of `fn`: `_functions/<module path>/<qualname path>`."""
    module = fn.__module__ or "__main__"
    module = UPSTREAM_MODULE_NAMES.get(module, module)
    qual = fn.__qualname__.replace(".<locals>", "")
    return "_functions/" + "/".join(module.split(".")) + "/" + "/".join(qual.split("."))


def _lookup(base: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, bool]:
    """(agent, its registry, whether `base` has a start or end extension) for a call of an extensible function
    that is not the usual case the wrapper answers itself (a method of an agent whose registry knows `base`)."""
    agent, reg = _find_registry(args, kwargs)
    if reg is None:
        return None, None, False
    hit = reg.hooks.get(base)
    return agent, reg, reg.hooked(base) if hit is None else hit


def _find_registry(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, PointRegistry | None]:
    """The agent the call is given (an `agent=` argument first, then the positional ones) and its registry."""
    candidate = kwargs.get("agent")
    reg = getattr(candidate, "extensions", None)
    if isinstance(reg, PointRegistry):
        _REGISTRIES.add(type(reg))
        return candidate, reg
    for a in args:
        reg = getattr(a, "extensions", None)
        if isinstance(reg, PointRegistry):
            _REGISTRIES.add(type(reg))
            return a, reg
    return None, None


def _normalise(data: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args = data["args"] if isinstance(data["args"], tuple) else (data["args"],)
    kwargs = data["kwargs"] if isinstance(data["kwargs"], dict) else {}
    return args, kwargs


def extensible(fn: F) -> F:
    """Give `fn` the implicit points `_functions/<module>/<qualname>/start|end`.

    Start extensions may replace `data["args"]`/`data["kwargs"]`, set `data["result"]` (the call is
    skipped) or `data["exception"]` (raised at once); end extensions may replace the result or
    replace/clear the exception."""
    base = function_point(fn)
    start, end = base + "/start", base + "/end"

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:  # the usual case: a method of an agent whose registry knows `base` (no call made)
                reg = args[0].extensions
                hit = reg.hooks[base] if reg.__class__ in _REGISTRIES and "agent" not in kwargs else None
            except (IndexError, AttributeError, KeyError):
                hit = None
            if hit is False:  # (no keywords: no dict handed on)
                return await (fn(*args, **kwargs) if kwargs else fn(*args))
            agent, reg, hit = (args[0], reg, hit) if hit else _lookup(base, args, kwargs)
            if not hit:
                return await fn(*args, **kwargs)
            data = {"args": args, "kwargs": kwargs, "result": _UNSET, "exception": None}
            await reg.call(start, agent, data=data)
            if data["exception"] is not None:
                raise data["exception"]
            if data["result"] is _UNSET:
                a, k = _normalise(data)
                try:
                    data["result"] = await fn(*a, **k)
                except Exception as exc:  # handed to end extensions, which may clear it
                    data["exception"] = exc
            await reg.call(end, agent, data=data)
            if data["exception"] is not None:
                raise data["exception"]
            return None if data["result"] is _UNSET else data["result"]
        async_wrapper.__a0_point__ = base  # type: ignore[attr-defined]
        return cast(F, async_wrapper)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:  # (as in async_wrapper)
            reg = args[0].extensions
            hit = reg.hooks[base] if reg.__class__ in _REGISTRIES and "agent" not in kwargs else None
        except (IndexError, AttributeError, KeyError):
            hit = None
        if hit is False:  # (no keywords: no dict handed on)
            return fn(*args, **kwargs) if kwargs else fn(*args)
        agent, reg, hit = (args[0], reg, hit) if hit else _lookup(base, args, kwargs)
        if not hit:
            return fn(*args, **kwargs)
        data = {"args": args, "kwargs": kwargs, "result": _UNSET, "exception": None}
        reg.call_sync(start, agent, data=data)
        if data["exception"] is not None:
            raise data["exception"]
        if data["result"] is _UNSET:
            a, k = _normalise(data)
            try:
                data["result"] = fn(*a, **k)
            except Exception as exc:
                data["exception"] = exc
        reg.call_sync(end, agent, data=data)
        if data["exception"] is not None:
            raise data["exception"]
        return None if data["result"] is _UNSET else data["result"]
    wrapper.__a0_point__ = base  # type: ignore[attr-defined]
    return cast(F, wrapper)
