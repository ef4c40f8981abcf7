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

The modules, each importing only those after it: ``compiled`` (the objects
above, memoised), then ``parser`` and ``evaluator`` (independent of each
other), then ``lexer`` and ``syntax`` (the tree both build and walk).
Import-linter's layers contract keeps it so. Callers import from here.
"""

from __future__ import annotations

from editor.graph.errors import ExpressionError
from editor.graph.expressions.compiled import (
    Expression,
    Reference,
    parse_expression,
    parse_reference,
)
from editor.graph.expressions.evaluator import (
    MISSING,
    Missing,
    compare,
    json_equal,
    values_equal,
)
from editor.graph.expressions.parser import MAX_LENGTH
from editor.graph.expressions.syntax import Segment

__all__ = [
    "MAX_LENGTH",
    "MISSING",
    "Expression",
    "ExpressionError",
    "Missing",
    "Reference",
    "Segment",
    "compare",
    "json_equal",
    "parse_expression",
    "parse_reference",
    "values_equal",
]
