"""JSON Schema checks for the engine: declared node schemas and resume inputs.

Violations name their place in the reference's path form (``$``, ``$.a``, ``$[0]``).
Validators are memoised by the schema's canonical text: runs check the same few schemas
over and over.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from editor.graph import canonical_json

__all__ = ["first_violation", "json_path", "violations"]


def json_path(error: ValidationError) -> str:
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


@lru_cache(maxsize=512)
def _validator(text: str) -> Draft202012Validator:
    import json

    return Draft202012Validator(json.loads(text))


def _errors(schema: Any, value: Any) -> list[ValidationError]:
    if schema is None or schema is True:
        return []
    if schema is False:
        return [ValidationError("no value is allowed here")]
    validator = _validator(canonical_json(schema).decode())
    return sorted(
        validator.iter_errors(value), key=lambda e: (list(map(str, e.absolute_path)), e.message)
    )


def violations(schema: Any, value: Any) -> list[dict[str, str]]:
    """Every violation of ``schema`` by ``value``: ``[{"path", "message"}]`` (empty: valid)."""
    return [
        {"path": json_path(error), "message": error.message} for error in _errors(schema, value)
    ]


def first_violation(schema: Any, value: Any) -> str | None:
    """The first violation as ``"{path}: {message}"``, or ``None`` when ``value`` is valid."""
    errors = _errors(schema, value)
    if not errors:
        return None
    return f"{json_path(errors[0])}: {errors[0].message}"
