"""Checks on the free JSON values of a document: schema validity (E6).

Checking a schema against the Draft 2020-12 meta-schema costs about a
millisecond, so results are memoised by the schema's canonical bytes.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from editor.graph.jsonio import MAX_DEPTH, canonical_json

__all__ = ["schema_problem"]

_SCHEMA_MEMO: dict[bytes, str | None] = {}
_SCHEMA_MEMO_SIZE = 4096
#: Extra stack frames for checking a deeply nested schema: jsonschema recurses
#: about eight frames per level, and the reader accepts 127 levels.
_SCHEMA_CHECK_FRAMES = 16 * (MAX_DEPTH + 1)
_RECURSION_LIMIT_LOCK = threading.Lock()


def _check_schema(schema: Any) -> None:
    """``check_schema``, retried with a raised recursion limit when the stack runs out.

    A schema near the nesting cap needs about a thousand frames, the default
    limit, so without the retry it would fail under any caller.
    """
    try:
        Draft202012Validator.check_schema(schema)
    except RecursionError:
        with _RECURSION_LIMIT_LOCK:
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(limit + _SCHEMA_CHECK_FRAMES)
            try:
                Draft202012Validator.check_schema(schema)
            finally:
                sys.setrecursionlimit(limit)


def schema_problem(schema: Any, key: bytes | None = None) -> str | None:
    """jsonschema's best-match message when ``schema`` is not a valid Draft 2020-12 schema.

    Memoised by the schema's canonical bytes (``key``, when the caller already
    has them): checking costs about a millisecond and documents repeat schemas.
    """
    if key is None:
        key = canonical_json(schema)
    if key in _SCHEMA_MEMO:
        return _SCHEMA_MEMO[key]
    try:
        _check_schema(schema)
    except SchemaError as error:
        problem: str | None = error.message
    except RecursionError:
        problem = "the schema nests too deeply to be checked"
    else:
        problem = None
    if len(_SCHEMA_MEMO) >= _SCHEMA_MEMO_SIZE:
        _SCHEMA_MEMO.clear()
    _SCHEMA_MEMO[key] = problem
    return problem
