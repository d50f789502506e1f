"""Checks shared by the four Crystal Lattice plugin kinds: a class defines the methods its contract requires,
a method returns the tuple its contract promises, and every failure names the file, the class and the contract."""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable, Sequence

from a0nb.errors import ModelError


class ContractError(ModelError):
    """A plugin broke its contract (missing method, wrong return shape, raised); the message names the file,
    the method and the contract's signature, and says how to fix it."""


def where(cls_or_obj: Any, path: Path | str | None = None) -> str:
    """`EchoProvider (providers/echo.py)`: the class and the file it came from (or where it was registered)."""
    cls = cls_or_obj if isinstance(cls_or_obj, type) else type(cls_or_obj)
    if path is None:
        try:
            path = inspect.getsourcefile(cls) or None
        except (TypeError, OSError):
            path = None
    return f"{cls.__qualname__} ({path or 'registered in the notebook'})"


def where_method(owner: Any, method: str, path: Path | str | None = None) -> str:
    """`Good.call_api (providers/good.py)`."""
    text = where(owner, path)
    name, _, rest = text.partition(" (")
    return f"{name}.{method} ({rest}"


def overrides(cls: type, base: type, method: str) -> bool:
    """The class (not `base`) defines `method`."""
    mine = getattr(cls, method, None)
    return mine is not None and mine is not getattr(base, method, None)


def missing_methods(cls: type, base: type, required: Sequence[str | tuple[str, ...]]) -> list[str]:
    """Required methods the class does not define; a tuple means 'one of these'."""
    out = []
    for need in required:
        names = (need,) if isinstance(need, str) else need
        if not any(overrides(cls, base, n) for n in names):
            out.append(" or ".join(names))
    return out


def check_class(cls: type, base: type, kind: str, required: Sequence[str | tuple[str, ...]],
                signatures: dict[str, str], path: Path | str | None = None) -> None:
    """Raise ContractError when `cls` lacks a required method of the `kind` contract."""
    missing = missing_methods(cls, base, required)
    if missing:
        wanted = "; ".join(signatures.get(m.split(" or ")[0], m) for m in missing)
        raise ContractError(
            f"{where(cls, path)} does not follow the {kind} contract: it defines no {', no '.join(missing)}. "
            f"Add {wanted}")


def expect_tuple(value: Any, shape: str, method: str, owner: Any, path: Path | str | None = None) -> tuple[Any, ...]:
    """`shape` is the contract's return, e.g. `(partials, finals, natives, state)`; each name ending in `s`
    (except `state`) must be a list, `state` a dict."""
    names = [n.strip() for n in shape.strip("()").split(",")]
    if not isinstance(value, (tuple, list)) or len(value) != len(names):
        got = f"a {len(value)}-tuple" if isinstance(value, (tuple, list)) else type(value).__name__
        raise ContractError(f"{where_method(owner, method, path)} returned {got}; the contract says it returns "
                            f"{shape} ({len(names)} items). Return all {len(names)}")
    for name, item in zip(names, value):
        if name == "state" and not isinstance(item, dict):
            raise ContractError(f"{where_method(owner, method, path)} returned {type(item).__name__} as `state`; the "
                                f"contract's {shape} needs the state dict last (return the state you were given)")
        if name != "state" and not isinstance(item, list):
            raise ContractError(f"{where_method(owner, method, path)} returned {type(item).__name__} as `{name}`; "
                                f"the contract's {shape} needs a list of messages there")
    return tuple(value)


def call(owner: Any, method: str, contract: str, *args: Any, path: Path | str | None = None, **kwargs: Any) -> Any:
    """Call a plugin method; an exception it raises becomes a ContractError naming the file and the contract."""
    fn: Callable[..., Any] = getattr(owner, method)
    try:
        return fn(*args, **kwargs)
    except ContractError:
        raise
    except Exception as exc:
        raise ContractError(f"{where_method(owner, method, path)} raised {type(exc).__name__}: {exc} (contract: {contract}). "
                            "Fix the plugin; the model call was abandoned and history is unchanged") from exc


__all__ = ["ContractError", "where", "where_method", "overrides", "missing_methods", "check_class", "expect_tuple", "call"]
