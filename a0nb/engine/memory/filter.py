"""Agent Zero's memory `filter`: a Python-like condition over a memory's metadata
(`area == 'main' and source_file.startswith('notes')`), evaluated without `eval`."""
from __future__ import annotations

import ast
import operator
from typing import Any, Callable, Mapping

from a0nb.errors import RepairableError

_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_METHODS = {"startswith", "endswith", "lower", "upper", "strip"}


class FilterError(RepairableError):
    """The model's filter is not a condition we can evaluate (the message goes back to it)."""


def compile_filter(text: str) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate over metadata; an empty filter accepts everything. Unknown names are None."""
    text = (text or "").strip()
    if not text:
        return lambda meta: True
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise FilterError(f"memory filter {text!r} is not a valid condition ({exc.msg}); write e.g. "
                          "area == 'main' and source_file.startswith('notes')") from None
    _check(tree, text)

    def predicate(meta: Mapping[str, Any]) -> bool:
        try:
            return bool(_eval(tree, meta))
        except (TypeError, AttributeError, ValueError):
            return False  # e.g. comparing a missing (None) field with a string
    return predicate


def _check(node: ast.AST, text: str) -> None:
    allowed = (ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.Compare, ast.Name, ast.Load, ast.Constant,
               ast.List, ast.Tuple, ast.Call, ast.Attribute, *_COMPARE)
    for sub in ast.walk(node):
        if not isinstance(sub, allowed):
            raise FilterError(f"memory filter {text!r} uses {type(sub).__name__}, which filters do not allow "
                              "(use comparisons, and/or/not, in, and str methods like startswith)")
        if isinstance(sub, ast.Call) and not (isinstance(sub.func, ast.Attribute) and sub.func.attr in _METHODS):
            raise FilterError(f"memory filter {text!r} calls something other than {', '.join(sorted(_METHODS))}")
        if isinstance(sub, ast.Attribute) and sub.attr not in _METHODS:
            raise FilterError(f"memory filter {text!r} reads attribute {sub.attr!r}")


def _eval(node: ast.AST, meta: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return meta.get(node.id)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(e, meta) for e in node.elts]
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, meta) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp):
        return not _eval(node.operand, meta)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, meta)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, meta)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        target = _eval(node.func.value, meta)
        return getattr(str(target), node.func.attr)(*[_eval(a, meta) for a in node.args])
    raise FilterError(f"cannot evaluate {ast.dump(node)}")


__all__ = ["compile_filter", "FilterError"]
