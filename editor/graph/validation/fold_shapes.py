"""Check 9 of the reference at 0.10: a fold's expressions read against its body's schema.

A fold's accumulated value is what its body produced, so the body node's declared
``output_schema`` is the shape ``stop_when`` and a ``best_by`` reference read, path
for path (spec 08, section 3). A path is refused only when a step positively fails:
the key is absent from a ``properties`` map that admits no other key. Anything the
schema does not say (no ``properties``, another ``type``, ``$ref`` and the other
composing keywords, open extra keys) leaves the rest of the path unjudged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from editor.graph.errors import ExpressionError
from editor.graph.expressions import Segment, parse_expression, parse_reference
from editor.graph.expressions.syntax import And, Compare, Not, Or, Path, Truthy
from editor.graph.model import BestBy, FoldNode, Node, NodeBody, output_schema_of

__all__ = ["condition_paths", "fold_shape_errors", "schema_at", "schema_describes"]

_COMPOSED = ("$ref", "anyOf", "oneOf", "allOf", "not")
_INTO, _UNJUDGED, _ABSENT = range(3)


def fold_shape_errors(
    fold: FoldNode, by_id: dict[str, Node]
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(code, message, keys)`` for each path of ``fold`` its body's schema refuses."""
    if not isinstance(fold.body, NodeBody):
        return
    body_id = fold.body.node
    body = by_id.get(body_id)
    schema = None if body is None else output_schema_of(body)
    if schema is None:
        return
    try:
        condition = parse_expression(fold.stop_when).root
    except ExpressionError:
        pass  # check 8 reported it
    else:
        for segments in condition_paths(condition):
            if not schema_describes(schema, segments):
                path = ".".join(str(segment) for segment in segments)
                yield (
                    "fold_stop_path_not_in_body_schema",
                    f"fold node `{fold.id}`: `stop_when` reads `{path}`, which body node "
                    f"`{body_id}`'s declared output schema does not describe",
                    {"node": fold.id, "path": path, "body": body_id},
                )
    if isinstance(fold.join, BestBy):
        try:
            reference = parse_reference(fold.join.reference)
        except ExpressionError:
            return
        if not schema_describes(schema, reference.segments):
            yield (
                "fold_join_reference_not_in_body_schema",
                f"fold node `{fold.id}`: the `best_by` join reference `{fold.join.reference}` "
                f"is not described by body node `{body_id}`'s declared output schema",
                {"node": fold.id, "reference": fold.join.reference, "body": body_id},
            )


def condition_paths(root: Any) -> Iterator[tuple[Segment, ...]]:
    """Every path operand of a parsed condition (``parse_expression(text).root``), left to
    right, a repeated path again (without recursion: ``!`` nests)."""
    pending = [root]
    while pending:
        node = pending.pop()
        if isinstance(node, (And, Or)):
            pending.extend(reversed(node.terms))
        elif isinstance(node, Not):
            pending.append(node.operand)
        elif isinstance(node, Compare):
            for operand in (node.left, node.right):
                if isinstance(operand, Path):
                    yield operand.segments
        elif isinstance(node, Truthy) and isinstance(node.operand, Path):
            yield node.operand.segments


def schema_describes(schema: Any, segments: tuple[Segment, ...]) -> bool:
    """False only when a step of the walk positively fails."""
    here = schema
    for segment in segments:
        outcome, here = _step(here, segment)
        if outcome == _UNJUDGED:
            return True
        if outcome == _ABSENT:
            return False
    return True


def schema_at(schema: Any, segments: tuple[Segment, ...]) -> tuple[bool | None, Any]:
    """The walk of :func:`schema_describes`, with where it ends: ``(True, the schema at the
    path)`` for a path walked to its end, ``(None, None)`` after an unjudged step, ``(False,
    None)`` when a step positively fails."""
    here = schema
    for segment in segments:
        outcome, here = _step(here, segment)
        if outcome == _UNJUDGED:
            return None, None
        if outcome == _ABSENT:
            return False, None
    return True, here


def _step(schema: Any, segment: Segment) -> tuple[int, Any]:
    if type(schema) is not dict or any(keyword in schema for keyword in _COMPOSED):
        return _UNJUDGED, None
    if isinstance(segment, str):
        properties = schema.get("properties")
        if not _admits(schema, "object") or type(properties) is not dict:
            return _UNJUDGED, None
        if segment in properties:
            return _INTO, properties[segment]
        if "patternProperties" in schema or schema.get("additionalProperties", False) is not False:
            return _UNJUDGED, None
        return _ABSENT, None
    if not _admits(schema, "array"):
        return _UNJUDGED, None
    items = schema.get("items")
    if type(items) is dict:
        return _INTO, items
    if type(items) is list and segment < len(items):
        return _INTO, items[segment]
    return _UNJUDGED, None


def _admits(schema: dict[str, Any], wanted: str) -> bool:
    """Whether the schema's ``type``, if it declares a well-formed one, admits ``wanted``."""
    declared = schema.get("type")
    if type(declared) is str:
        return declared == wanted
    if type(declared) is list:
        return wanted in declared
    return True
