"""Input checking for built-in tools: the declared ``input_schema``, enforced inside the tool.

The engine checks a *node's* declared schemas; a built-in also checks its own, so a wrong
input fails with a :class:`~editor.engine.errors.ToolError` that says what is wrong instead
of a ``KeyError`` deep inside the tool.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from jsonschema.exceptions import best_match

from editor.engine.errors import ToolError
from editor.engine.ports import ToolContext
from editor.graph.closed_schemas import SchemaUnusable, compile_schema

__all__ = ["compact_json", "json_path", "with_input_check"]

ToolFunc = Callable[[Any, ToolContext], Any]


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def json_path(path: Any) -> str:
    """A jsonschema error path in the reference's form: ``$``, ``$.a``, ``$[0]``."""
    text = "$"
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def with_input_check(schema: dict[str, Any], func: ToolFunc) -> ToolFunc:
    """``func``, refusing (ToolError) an input that breaks ``schema``."""
    validator = compile_schema(schema)

    @functools.wraps(func)
    def checked(value: Any, context: ToolContext) -> Any:
        try:
            error = best_match(validator.errors(value))
        except SchemaUnusable as unusable:
            raise ToolError(f"the tool's input_schema cannot be used: {unusable}") from None
        if error is not None:
            raise ToolError(
                f"its input does not match the tool's input_schema at "
                f"{json_path(error.absolute_path)}: {error.message}"
            )
        return func(value, context)

    return checked
