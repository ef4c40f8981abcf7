"""The small offline built-ins: ``echo``, ``template``, ``pick``, ``merge``, ``score_text``.

Each is deterministic and touches nothing outside its input.
"""

from __future__ import annotations

import re
from typing import Any

from editor.engine.errors import ToolError
from editor.engine.ports import ToolContext, ToolEffect, ToolSpec
from editor.graph import MISSING, ExpressionError, parse_reference
from editor.tools.checked import compact_json, with_input_check

__all__ = ["basic_tools", "render_template", "score"]

#: ``score_text``: the word count at which a text stops gaining from length.
FULL_LENGTH_WORDS = 40

_WORD = re.compile(r"\w+")


def _echo(value: Any, context: ToolContext) -> Any:
    return value


def _resolve(path: str, values: Any, what: str) -> Any:
    try:
        reference = parse_reference(path)
    except ExpressionError as error:
        raise ToolError(f"{what} `{path}` is not a valid path: {error}") from None
    return reference.resolve(values)


def render_template(template: str, values: Any) -> str:
    """Replace each ``{path}`` by the value at ``path`` in ``values``; ``{{`` and ``}}`` are
    literal braces. Strings are inserted as they are, other values as compact JSON."""
    out: list[str] = []
    position = 0
    length = len(template)
    while position < length:
        char = template[position]
        if char == "{" and template.startswith("{{", position):
            out.append("{")
            position += 2
        elif char == "}" and template.startswith("}}", position):
            out.append("}")
            position += 2
        elif char == "{":
            end = template.find("}", position + 1)
            if end < 0:
                raise ToolError(
                    f"the template has a `{{` at character {position} that is never closed "
                    "(write `{{` for a literal brace)"
                )
            path = template[position + 1 : end].strip()
            value = _resolve(path, values, "the template placeholder")
            if value is MISSING:
                raise ToolError(f"the template names `{path}`, which is missing from `values`")
            out.append(value if isinstance(value, str) else compact_json(value))
            position = end + 1
        elif char == "}":
            raise ToolError(
                f"the template has a lone `}}` at character {position} "
                "(write `}}` for a literal brace)"
            )
        else:
            next_brace = min(
                (i for i in (template.find("{", position), template.find("}", position)) if i >= 0),
                default=length,
            )
            out.append(template[position:next_brace])
            position = next_brace
    return "".join(out)


def _template(value: dict[str, Any], context: ToolContext) -> str:
    return render_template(value["template"], value.get("values", {}))


def _pick(value: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    picked: dict[str, Any] = {}
    for path in value["paths"]:
        found = _resolve(path, value.get("from"), "the path")
        picked[path] = None if found is MISSING else found
    return picked


def _merge(value: list[Any], context: ToolContext) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise ToolError(f"merge takes a list of objects; item {index} is not an object")
        merged.update(item)
    return merged


def score(text: str) -> float:
    """``min(1, words / 40) × (0.5 + 0.5 × distinct / words)``, rounded to 4 places.

    Words are runs of letters, digits and ``_`` (Unicode-aware), compared case-insensitively.
    Length earns up to 1 at 40 words; repetition halves it at worst. Empty text scores 0.
    """
    words = [word.casefold() for word in _WORD.findall(text)]
    if not words:
        return 0.0
    length = min(1.0, len(words) / FULL_LENGTH_WORDS)
    variety = len(set(words)) / len(words)
    return round(length * (0.5 + 0.5 * variety), 4)


def _score_text(value: Any, context: ToolContext) -> dict[str, Any]:
    text = value if isinstance(value, str) else value["text"]
    return {"text": text, "score": score(text)}


_ANY: dict[str, Any] = {}
_TEMPLATE_IN = {
    "type": "object",
    "properties": {"template": {"type": "string"}, "values": {}},
    "required": ["template"],
}
_PICK_IN = {
    "type": "object",
    "properties": {"from": {}, "paths": {"type": "array", "items": {"type": "string"}}},
    "required": ["from", "paths"],
}
_MERGE_IN = {"type": "array", "items": {"type": "object"}}
_SCORE_IN = {
    "anyOf": [
        {"type": "string"},
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ]
}
_SCORE_OUT = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["text", "score"],
}


def basic_tools() -> list[ToolSpec]:
    return [
        ToolSpec(
            "echo",
            "Returns its input unchanged.",
            _echo,
            ToolEffect.READ,
            _ANY,
            _ANY,
        ),
        ToolSpec(
            "template",
            "Renders the `{path}` placeholders of `template` from `values` (a path is a "
            "reference such as `user.name` or `items.0`); `{{` and `}}` are literal braces; "
            "a missing path fails the call.",
            with_input_check(_TEMPLATE_IN, _template),
            ToolEffect.READ,
            _TEMPLATE_IN,
            {"type": "string"},
        ),
        ToolSpec(
            "pick",
            "An object of the values at `paths` inside `from`, keyed by the path text; "
            "a path that names nothing gives null.",
            with_input_check(_PICK_IN, _pick),
            ToolEffect.READ,
            _PICK_IN,
            {"type": "object"},
        ),
        ToolSpec(
            "merge",
            "Shallow-merges a list of objects, later keys winning.",
            with_input_check(_MERGE_IN, _merge),
            ToolEffect.READ,
            _MERGE_IN,
            {"type": "object"},
        ),
        ToolSpec(
            "score_text",
            "A deterministic 0–1 score of a text (a string or {text}): "
            "min(1, words/40) × (0.5 + 0.5 × distinct words/words). For refine loops.",
            with_input_check(_SCORE_IN, _score_text),
            ToolEffect.READ,
            _SCORE_IN,
            _SCORE_OUT,
        ),
    ]
