"""JSON Schema checks for the engine: declared node schemas, accumulators and resume inputs.

Violations name their place in the reference's path form (``$``, ``$.a``, ``$[0]``).
Schemas are compiled by :mod:`editor.graph.closed_schemas` (memoised by canonical text): no
reference is ever fetched and patterns run in linear time. A schema that cannot be used (a
graph stored before validation refused it) is reported as one violation that says why,
``the schema cannot be used: …``, instead of an exception; so is a check that takes longer
than its caller's ``seconds`` (``the value could not be checked against the schema within …``).
At most 100 violations are reported, each message at most 1,000 characters.
"""

from __future__ import annotations

from typing import Any

from jsonschema.exceptions import ValidationError

from editor.graph.closed_schemas import CheckTooSlow, SchemaUnusable, compile_schema

__all__ = ["first_violation", "json_path", "violations"]

_UNUSABLE = "the schema cannot be used: "


def json_path(error: ValidationError) -> str:
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _problems(schema: Any, value: Any, seconds: float | None) -> list[tuple[str, str]]:
    """``(path, message)`` per violation, in path order; one at ``$`` for an unusable schema
    or a check past ``seconds``."""
    if schema is None or schema is True:
        return []
    if schema is False:
        return [("$", "no value is allowed here")]
    try:
        errors = compile_schema(schema).errors(value, seconds=seconds)
    except SchemaUnusable as error:
        return [("$", _UNUSABLE + str(error))]
    except CheckTooSlow as error:
        return [("$", str(error))]
    errors.sort(key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return [(json_path(error), error.message) for error in errors]


def violations(schema: Any, value: Any, *, seconds: float | None = None) -> list[dict[str, str]]:
    """The violations of ``schema`` by ``value``: ``[{"path", "message"}]`` (empty: valid).
    With ``seconds``, a check that takes longer is one violation at ``$`` saying so."""
    return [
        {"path": path, "message": message} for path, message in _problems(schema, value, seconds)
    ]


def first_violation(schema: Any, value: Any) -> str | None:
    """The first violation as ``"{path}: {message}"`` (an unusable schema: its reason alone),
    or ``None`` when ``value`` is valid."""
    problems = _problems(schema, value, None)
    if not problems:
        return None
    path, message = problems[0]
    return message if message.startswith(_UNUSABLE) else f"{path}: {message}"
