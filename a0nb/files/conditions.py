"""The safe `{{if}}` evaluator: names, literals, and/or/not, comparisons, bounded arithmetic,
subscripts and len(); anything else is an `EvalError` naming what is not allowed."""
from __future__ import annotations

import ast
import operator
from typing import Any, Callable

__all__ = ["EvalError", "truth"]

_MAX_BITS = 100_000  # bound on integers and sequences built inside `{{if}}` expressions


class EvalError(Exception):
    pass


_ARITH: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


def truth(code: ast.Expression, names: dict[str, Any]) -> bool:
    try:
        return bool(_ev(code.body, names))
    except EvalError:
        raise
    except Exception as exc:  # TypeError, ZeroDivisionError, a value whose __bool__ raises, ...
        raise EvalError(f"{type(exc).__name__}: {exc}") from None


def _ev(node: ast.AST, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        if node.value is None or isinstance(node.value, (str, int, float)):
            return node.value
        raise EvalError(f"literal {node.value!r} is not allowed")
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        raise EvalError(f"undefined name {node.id!r}")
    if isinstance(node, ast.BoolOp):
        want_true = isinstance(node.op, ast.Or)
        result: Any = None
        for value_node in node.values:
            result = _ev(value_node, names)
            if bool(result) == want_true:
                break
        return result
    if isinstance(node, ast.UnaryOp):
        return _unary(node, _ev(node.operand, names))
    if isinstance(node, ast.BinOp):
        return _binop(node.op, _ev(node.left, names), _ev(node.right, names))
    if isinstance(node, ast.Compare):
        return _compare(node, names)
    if isinstance(node, ast.Subscript):
        return _subscript(node, names)
    if isinstance(node, ast.Call):
        return _call(node, names)
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_bad(e) if isinstance(e, ast.Starred) else _ev(e, names) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise EvalError("** in a dict literal is not allowed")
        return {_ev(k, names): _ev(v, names) for k, v in zip(node.keys, node.values) if k is not None}
    return _bad(node)


def _compare(node: ast.Compare, names: dict[str, Any]) -> bool:
    left = _ev(node.left, names)
    for op, right_node in zip(node.ops, node.comparators):
        right = _ev(right_node, names)
        if not _COMPARE[type(op)](left, right):
            return False
        left = right
    return True


def _bad(node: ast.AST) -> Any:
    raise EvalError(f"{type(node).__name__} is not allowed in {{{{if}}}} (names, literals, and/or/not, "
                     "comparisons, arithmetic, subscripts and len() are)")


def _unary(node: ast.UnaryOp, value: Any) -> Any:
    if isinstance(node.op, ast.Not):
        return not value
    if isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(value, (int, float)):
        return -value if isinstance(node.op, ast.USub) else +value
    raise EvalError(f"{type(node.op).__name__} of {type(value).__name__} is not allowed")


def _binop(op: ast.operator, a: Any, b: Any) -> Any:
    fn = _ARITH.get(type(op))
    if fn is None:
        return _bad(op)
    numbers = isinstance(a, (int, float)) and isinstance(b, (int, float))
    if isinstance(op, (ast.Mod, ast.Pow)) and not numbers:
        raise EvalError(f"{type(op).__name__} needs numbers")  # `%` on strings is formatting
    if isinstance(op, ast.Pow) and isinstance(a, int) and isinstance(b, int) and abs(b) > 1:
        if max(a.bit_length(), 1) * abs(b) > _MAX_BITS:
            raise EvalError("power too large")
    if isinstance(op, ast.Mult) and not numbers:
        seq, n = (a, b) if isinstance(b, int) else (b, a)
        if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > _MAX_BITS:
            raise EvalError("repetition too large")
    return fn(a, b)


def _subscript(node: ast.Subscript, names: dict[str, Any]) -> Any:
    container = _ev(node.value, names)
    if isinstance(node.slice, ast.Slice):
        raise EvalError("slices are not allowed")
    if not isinstance(container, (dict, list, tuple, str)):
        raise EvalError(f"cannot subscript {type(container).__name__}")
    return container[_ev(node.slice, names)]


def _call(node: ast.Call, names: dict[str, Any]) -> Any:
    if (isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1
            and not node.keywords and not isinstance(node.args[0], ast.Starred)):
        return len(_ev(node.args[0], names))
    raise EvalError("only len(x) may be called")

