"""The condition language of spec 03: expressions for branches and folds, references for paths.

>>> expression = parse_expression("score > 0.8 && !rejected")
>>> expression.evaluate({"score": 0.9, "rejected": False})
True
>>> parse_reference("items.0.score").resolve({"items": [{"score": 1}]})
1
>>> parse_reference("items.1").resolve({"items": []})
MISSING

Parsing raises :class:`~editor.graph.errors.ExpressionError` with the spec's
exact message; evaluating and resolving never raise.
"""

from __future__ import annotations

from editor.graph.errors import ExpressionError
from editor.graph.expressions.evaluator import MISSING, Missing, compare, values_equal
from editor.graph.expressions.parser import (
    MAX_LENGTH,
    Expression,
    Reference,
    Segment,
    parse_expression,
    parse_reference,
)

__all__ = [
    "MAX_LENGTH",
    "MISSING",
    "Expression",
    "ExpressionError",
    "Missing",
    "Reference",
    "Segment",
    "compare",
    "parse_expression",
    "parse_reference",
    "values_equal",
]
