"""Evaluating conditions and resolving paths (spec 03, *Paths* and *Evaluation*).

Evaluation is total: every tree yields ``True`` or ``False`` for every value,
and nothing here raises. It walks the tree with an explicit stack, so deep
nesting costs no Python stack.

Values are JSON values as :func:`editor.graph.jsonio.read_json` returns them.
Values from plain :func:`json.loads` work too: an integer outside the i64 and
u64 ranges is compared as the float the reference would have read (only ``-0`` cannot be
recovered). Python's own rules are not JSON's, and are not used: ``True`` is
not the number 1, and ``[1]`` is not ``[1.0]``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Final, final

from editor.graph.expressions.syntax import (
    And,
    Compare,
    Condition,
    Literal,
    Not,
    Operand,
    Or,
    Segment,
    Truthy,
)
from editor.graph.jsonio import reference_number

__all__ = [
    "MISSING",
    "Missing",
    "compare",
    "evaluate_condition",
    "json_equal",
    "resolve_segments",
    "values_equal",
]

# JSON types, as the evaluator tells them apart. `_OTHER` is anything that is not
# a JSON value: equal to nothing, ordered against nothing.
_NULL, _BOOLEAN, _NUMBER, _STRING, _ARRAY, _OBJECT, _OTHER = range(7)
_ORDER_HOLDS = {"<": (-1,), "<=": (-1, 0), ">": (1,), ">=": (0, 1)}


@final
class Missing:
    """The type of :data:`MISSING`: what a path that names nothing resolves to.

    Distinct from JSON ``null`` (``None``). There is one instance; it is falsy,
    and copies and pickles of it are itself.
    """

    __slots__ = ()
    _instance: ClassVar[Missing | None] = None

    def __new__(cls) -> Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "MISSING"


#: An absent key, an index past the end, or a step into a value that is not a container.
MISSING: Final = Missing()


def evaluate_condition(root: Condition, value: Any) -> bool:
    """Whether the condition ``root`` holds for ``value``, short-circuiting ``&&`` and ``||``."""
    # Each entry is an unfinished `!`, `&&` or `||` node and the index of its next term.
    pending: list[tuple[Not | And | Or, int]] = []
    node: Condition = root
    while True:
        while isinstance(node, (Not, And, Or)):
            if isinstance(node, Not):
                pending.append((node, 0))
                node = node.operand
            else:
                pending.append((node, 1))
                node = node.terms[0]
        if isinstance(node, Truthy):
            result = _operand_value(node.operand, value) is True
        else:
            result = _compare(node, value)
        while pending:
            parent, next_term = pending.pop()
            if isinstance(parent, Not):
                result = not result
            elif next_term < len(parent.terms) and result is isinstance(parent, And):
                # `&&` goes on while true, `||` while false.
                pending.append((parent, next_term + 1))
                node = parent.terms[next_term]
                break
        else:
            return result


def resolve_segments(segments: tuple[Segment, ...], value: Any) -> Any | Missing:
    """Follow ``segments`` from ``value``: the value found (unchanged), or :data:`MISSING`.

    A key segment (str) reads an object; an index segment (int) reads an array,
    and never an object.
    """
    current = value
    for segment in segments:
        if isinstance(segment, str):
            if not isinstance(current, dict) or segment not in current:
                return MISSING
        elif not isinstance(current, (list, tuple)) or segment >= len(current):
            return MISSING
        current = current[segment]
    return current


def values_equal(left: Any, right: Any) -> bool:
    """``==`` of the language: numbers by value (``1 == 1.0``), all else by :func:`json_equal`."""
    if _kind(left) == _NUMBER and _kind(right) == _NUMBER:
        return _compare_numbers(_number(left), _number(right)) == 0
    return json_equal(left, right)


def compare(left: Any, right: Any) -> int | None:
    """Order two values as ``<`` and friends do: -1, 0 or 1; ``None`` when unordered.

    Only two numbers or two strings (by code point) are ordered.
    """
    left_kind, right_kind = _kind(left), _kind(right)
    if left_kind == right_kind == _NUMBER:
        return _compare_numbers(_number(left), _number(right))
    if left_kind == right_kind == _STRING:
        order: int = (left > right) - (left < right)
        return order
    return None


def json_equal(left: Any, right: Any) -> bool:
    """JSON value equality, as the reference defines it (serde_json's ``Value ==``).

    Types must match (a boolean is not a number), an integer never equals a
    float (``[1]`` is not ``[1.0]``), floats compare as IEEE doubles, arrays
    element by element, objects key by key. Iterative, so any depth is fine.
    """
    pending = [(left, right)]
    while pending:
        a, b = pending.pop()
        kind = _kind(a)
        if kind != _kind(b) or kind == _OTHER:
            return False
        if kind == _NUMBER:
            x, y = _number(a), _number(b)
            if isinstance(x, int) != isinstance(y, int) or x != y:
                return False
        elif kind == _ARRAY:
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif kind == _OBJECT:
            if len(a) != len(b) or any(key not in b for key in a):
                return False
            pending.extend((a[key], b[key]) for key in a)
        elif kind != _NULL and a != b:
            return False
    return True


def _operand_value(operand: Operand, root: Any) -> Any | Missing:
    if isinstance(operand, Literal):
        return operand.value
    return resolve_segments(operand.segments, root)


def _compare(node: Compare, root: Any) -> bool:
    left = _operand_value(node.left, root)
    if left is MISSING:
        return False
    right = _operand_value(node.right, root)
    if right is MISSING:
        return False
    if node.operator == "==":
        return values_equal(left, right)
    if node.operator == "!=":
        return not values_equal(left, right)
    return compare(left, right) in _ORDER_HOLDS[node.operator]


def _kind(value: Any) -> int:
    if value is None:
        return _NULL
    if value is True or value is False:
        return _BOOLEAN
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _NUMBER
    if isinstance(value, str):
        return _STRING
    if isinstance(value, (list, tuple)):
        return _ARRAY
    if isinstance(value, dict):
        return _OBJECT
    return _OTHER


def _number(value: int | float) -> int | float:
    """A number as the reference holds it: an integer in the i64 or u64 range, else a double."""
    if isinstance(value, int):
        try:
            return reference_number(int(value))
        except OverflowError:
            # Too large even for a double: the reference could not have read it at all.
            return math.inf if value > 0 else -math.inf
    return float(value)


def _compare_numbers(left: int | float, right: int | float) -> int | None:
    if isinstance(left, int) and isinstance(right, int):
        return (left > right) - (left < right)
    x, y = float(left), float(right)
    if x < y:
        return -1
    if x > y:
        return 1
    return 0 if x == y else None
