"""JSON Schema checks for the engine: declared node schemas, accumulators and resume inputs.

Violations name their place in the reference's path form (``$``, ``$.a``, ``$[0]``).
Schemas are compiled by :mod:`editor.graph.closed_schemas` (memoised by canonical text): no
reference is ever fetched and patterns run in linear time. A schema that cannot be used (a
graph stored before validation refused it) is reported as one violation that says why,
``the schema cannot be used: …``, instead of an exception.
"""

from __future__ import annotations

from typing import Any

from jsonschema.exceptions import ValidationError

from editor.graph.closed_schemas import SchemaUnusable, compile_schema

__all__ = ["first_violation", "json_path", "violations"]

_UNUSABLE = "the schema cannot be used: "


def json_path(error: ValidationError) -> str:
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _problems(schema: Any, value: Any) -> list[tuple[str, str]]:
    """``(path, message)`` per violation, in path order; one at ``$`` for an unusable schema."""
    if schema is None or schema is True:
        return []
    if schema is False:
        return [("$", "no value is allowed here")]
    try:
        errors = compile_schema(schema).errors(value)
    except SchemaUnusable as error:
        return [("$", _UNUSABLE + str(error))]
    errors.sort(key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return [(json_path(error), error.message) for error in errors]


def violations(schema: Any, value: Any) -> list[dict[str, str]]:
    """Every violation of ``schema`` by ``value``: ``[{"path", "message"}]`` (empty: valid)."""
    return [{"path": path, "message": message} for path, message in _problems(schema, value)]


def first_violation(schema: Any, value: Any) -> str | None:
    """The first violation as ``"{path}: {message}"`` (an unusable schema: its reason alone),
    or ``None`` when ``value`` is valid."""
    problems = _problems(schema, value)
    if not problems:
        return None
    path, message = problems[0]
    return message if message.startswith(_UNUSABLE) else f"{path}: {message}"
