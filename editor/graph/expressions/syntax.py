"""The syntax tree of condition expressions and references (spec 03).

The parser builds these nodes and the evaluator walks them; neither imports
the other, so both depend on this module alone. ``&&``/``||`` chains are one
n-ary node each; each ``!`` is one node. Nodes are immutable and compare by
structure, through :func:`render`, which writes a tree back as text.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from decimal import Decimal

__all__ = [
    "And",
    "Compare",
    "Condition",
    "Literal",
    "Node",
    "Not",
    "Operand",
    "Or",
    "Path",
    "Scalar",
    "Segment",
    "Truthy",
    "render",
]

type Segment = str | int
type Scalar = str | int | float | bool | None


class Node:
    """Base of the syntax tree. Equality, hashing and ``repr`` go through :func:`render`."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Node) or type(other) is not type(self):
            return NotImplemented
        return render(self) == render(other)

    def __hash__(self) -> int:
        return hash((type(self).__name__, render(self)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({render(self)})"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Literal(Node):
    """A string, number, ``true``, ``false`` or ``null`` written in the text."""

    value: Scalar


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Path(Node):
    """Dot-separated segments from the root of the value: keys (str) and indexes (int)."""

    segments: tuple[Segment, ...]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Compare(Node):
    """``left operator right``; ``operator`` is one of ``== != < <= > >=``."""

    left: Operand
    operator: str
    right: Operand


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Truthy(Node):
    """A bare operand in boolean position: true only when it is JSON ``true``."""

    operand: Operand


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Not(Node):
    """``!operand``."""

    operand: Condition


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class And(Node):
    """``a && b && …``: two or more terms, evaluated left to right, short-circuiting."""

    terms: tuple[Condition, ...]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Or(Node):
    """``a || b || …``: two or more terms, evaluated left to right, short-circuiting."""

    terms: tuple[Condition, ...]


type Operand = Literal | Path
type Condition = Compare | Truthy | Not | And | Or


def render(node: Node) -> str:
    """Write ``node`` back as text, without recursion, showing how the parser grouped it.

    ``&&``/``||`` groups are always parenthesised and a negated comparison is
    written ``!(…)``; the text parses back to an equal tree (length permitting).
    """
    parts: list[str] = []
    pending: list[Node | str] = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, Literal):
            parts.append(_literal_text(item.value))
        elif isinstance(item, Path):
            parts.append(_path_text(item.segments))
        elif isinstance(item, Truthy):
            pending.append(item.operand)
        elif isinstance(item, Compare):
            pending.extend((item.right, f" {item.operator} ", item.left))
        elif isinstance(item, Not):
            if isinstance(item.operand, Compare):
                pending.extend((")", item.operand, "!("))
            else:
                pending.extend((item.operand, "!"))
        elif isinstance(item, (And, Or)):
            joiner = " && " if isinstance(item, And) else " || "
            pending.append(")")
            for index in range(len(item.terms) - 1, -1, -1):
                pending.append(item.terms[index])
                pending.append(joiner if index else "(")
        else:
            raise TypeError(f"not a node of the syntax tree: {type(item).__name__}")
    return "".join(parts)


def _path_text(segments: tuple[Segment, ...]) -> str:
    parts = [str(segments[0])]
    for previous, segment in itertools.pairwise(segments):
        # `0.1` would lex as one number: an index that follows an index needs a space first.
        separator = " ." if isinstance(previous, int) and isinstance(segment, int) else "."
        parts.append(f"{separator}{segment}")
    return "".join(parts)


def _literal_text(value: Scalar) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # The language has no exponents: write the shortest round-trip digits out in full.
        text = format(Decimal(repr(value)), "f")
        return text if "." in text else text + ".0"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'
