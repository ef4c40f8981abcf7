"""The objects callers hold: a parsed :class:`Expression` or :class:`Reference`.

:func:`parse_expression` and :func:`parse_reference` are the front doors: they
check the length limit, memoise by text (failures included) and wrap what the
parser built; :meth:`Expression.evaluate` and :meth:`Reference.resolve` hand it
to the evaluator. This is the one module that sees both.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, cast

from editor.graph.errors import ExpressionError
from editor.graph.expressions.evaluator import Missing, evaluate_condition, resolve_segments
from editor.graph.expressions.parser import check_length, parse_condition, parse_path
from editor.graph.expressions.syntax import Condition, Segment

__all__ = ["Expression", "Reference", "parse_expression", "parse_reference"]

_CACHE_SIZE = 4096

#: A memoised failure: the error's ``(what, position)``, raised afresh each time. The memo of
#: one kind holds only that kind or a failure, so what is not the kind asked for is this.
type _Failure = tuple[str, int | None]


@dataclass(frozen=True, slots=True)
class Expression:
    """A parsed condition. Equal when the trees are equal, whatever the spacing."""

    text: str = field(compare=False)
    root: Condition

    def evaluate(self, value: Any) -> bool:
        """Whether the condition holds for ``value`` (a JSON value); never raises."""
        return evaluate_condition(self.root, value)

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"


@dataclass(frozen=True, slots=True)
class Reference:
    """A parsed reference: a path into the routed value. Equal when the segments are."""

    text: str = field(compare=False)
    segments: tuple[Segment, ...]

    def resolve(self, value: Any) -> Any | Missing:
        """The value the path names inside ``value``, or ``MISSING``; never raises."""
        return resolve_segments(self.segments, value)

    def __repr__(self) -> str:
        return f"Reference({self.text!r})"


def parse_expression(text: str) -> Expression:
    """Parse a condition expression, memoised; raises :class:`ExpressionError`."""
    return _parsed(Expression, text, "expression")


def parse_reference(text: str) -> Reference:
    """Parse a reference (a bare path), memoised; raises :class:`ExpressionError`."""
    return _parsed(Reference, text, "reference")


def _parsed[Parsed: (Expression, Reference)](kind: type[Parsed], text: str, what: str) -> Parsed:
    """``text`` parsed as ``kind`` (``what`` names it in the length error), or the memoised
    failure raised afresh."""
    check_length(text, what)
    result = _memoised_parse(what, text)
    if isinstance(result, kind):
        return result
    raise ExpressionError(*cast(_Failure, result))


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _memoised_parse(what: str, text: str) -> Expression | Reference | _Failure:
    """The parsed object (an expression, or for any other ``what`` a reference), or the
    error's ``(what, position)`` to raise afresh each time."""
    try:
        if what == "expression":
            return Expression(text, parse_condition(text))
        return Reference(text, parse_path(text))
    except ExpressionError as error:
        return (error.what, error.position)
