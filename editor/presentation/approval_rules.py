"""How a gate's form is laid out (spec 06, *Approval inbox*, and ``docs/inbox.md``): the order
of its fields, the decision buttons, the schema's own comment, and the constraints the browser
enforces beside the server.

* **Order.** A recorded ``approval_schema`` is stored as canonical JSON, whose object keys are
  sorted, so the order its author wrote is gone. Fields come in the order people expect:
  required before optional; then the schema's ``x-order`` (or ``propertyOrder``) hints, lowest
  first, where a property has one; then the property's position in ``required``; then by key.
* **The decision.** The first required boolean in that order is the gate's decision: two
  buttons (**Approve** / **Reject**, or the property's title and its negation) that set it and
  submit the form. Any other boolean stays a checkbox.
* **The comment.** A property whose key is ``comment`` (any case) replaces the built-in
  *Comment (optional)*: its value is the resolution's comment too.
* **Constraints.** ``minimum``/``maximum`` (and the exclusive bounds, for integers),
  ``minLength``/``maxLength`` become HTML attributes and a line of text beside the field; a
  ``pattern`` is checked by ``static/js/approval.js`` (an HTML ``pattern`` attribute would
  anchor the expression to the whole value and compile it with the ``v`` flag, where JSON
  Schema's is an unanchored search); ``enum`` is the select's options. The browser only saves a
  round trip: the server checks the full schema and stays the judge.

Plain Python: no Django here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

__all__ = [
    "NO_CONSTRAINTS",
    "Constraints",
    "comment_key",
    "constraints_of",
    "decision_labels",
    "is_number",
    "ordered_keys",
]

#: The first word of a decision's title → the first word of its negation.
_OPPOSITES = {
    "approve": "reject",
    "approved": "rejected",
    "accept": "decline",
    "accepted": "declined",
    "allow": "deny",
    "allowed": "denied",
    "agree": "disagree",
    "yes": "no",
    "pass": "fail",
    "publish": "withhold",
    "ship": "hold",
}
_FIRST_WORD = re.compile(r"^(?P<word>[^\W\d_]+)(?P<rest>.*)$", re.DOTALL)


def is_number(value: Any) -> TypeGuard[int | float]:
    """A JSON number (not a boolean, not NaN or an infinity)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def _hint(spec: Any) -> tuple[int, float]:
    if isinstance(spec, Mapping):
        for name in ("x-order", "propertyOrder"):
            value = spec.get(name)
            if is_number(value):
                return (0, float(value))
    return (1, 0.0)


def ordered_keys(properties: Mapping[str, Any], required: list[Any]) -> list[str]:
    """The keys of ``properties`` in the order their fields are shown."""
    position = {key: index for index, key in reversed(list(enumerate(required)))}

    def order(key: str) -> tuple[Any, ...]:
        index = position.get(key)
        return (index is None, _hint(properties[key]), index if index is not None else 0, key)

    return sorted((str(key) for key in properties), key=order)


def comment_key(properties: Mapping[str, Any]) -> str | None:
    """The schema's own comment property, which replaces the built-in comment."""
    return next((str(key) for key in properties if str(key).casefold() == "comment"), None)


def _capitalised(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def decision_labels(title: str | None) -> tuple[str, str]:
    """The two buttons of a decision: its title (or *Approve*) and that title's negation."""
    text = (title or "").strip()
    if not text:
        return "Approve", "Reject"
    match = _FIRST_WORD.match(text)
    if match:
        opposite = _OPPOSITES.get(match["word"].casefold())
        if opposite is not None:
            return text, _capitalised(opposite, match["word"]) + match["rest"]
    return text, f"Not “{text}”"


@dataclass(frozen=True, slots=True)
class Constraints:
    """What the browser is told about a field: HTML attributes (name, value), the pattern that
    ``approval.js`` checks, and the limits in words, each part ``(text, is_code)``."""

    attributes: tuple[tuple[str, str], ...] = ()
    pattern: str = ""
    words: tuple[tuple[str, bool], ...] = ()


NO_CONSTRAINTS = Constraints()


def _number_text(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return repr(float(value))


def _attribute_number(value: float) -> str:
    return str(int(value)) if isinstance(value, int) else repr(float(value))


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _number_constraints(spec: Mapping[str, Any], integer: bool) -> Constraints:
    attributes: list[tuple[str, str]] = []
    words: list[str] = []
    low, high = spec.get("minimum"), spec.get("maximum")
    low_open, high_open = spec.get("exclusiveMinimum"), spec.get("exclusiveMaximum")
    lowest = low if is_number(low) else None
    highest = high if is_number(high) else None
    if integer and is_number(low_open):
        candidate = math.floor(low_open) + 1
        lowest = candidate if lowest is None else max(lowest, candidate)
        low_open = None
    if integer and is_number(high_open):
        candidate = math.ceil(high_open) - 1
        highest = candidate if highest is None else min(highest, candidate)
        high_open = None
    if lowest is not None:
        attributes.append(("min", _attribute_number(lowest)))
    if highest is not None:
        attributes.append(("max", _attribute_number(highest)))
    if lowest is not None and highest is not None:
        words.append(f"{_number_text(lowest)} to {_number_text(highest)}")
    elif lowest is not None:
        words.append(f"at least {_number_text(lowest)}")
    elif highest is not None:
        words.append(f"at most {_number_text(highest)}")
    if is_number(low_open):
        words.append(f"more than {_number_text(low_open)}")
    if is_number(high_open):
        words.append(f"less than {_number_text(high_open)}")
    multiple = spec.get("multipleOf")
    if is_number(multiple) and multiple > 0:
        words.append(f"a multiple of {_number_text(multiple)}")
    if integer:
        words.insert(0, "a whole number")
    return Constraints(tuple(attributes), "", tuple((text, False) for text in words))


def _length_words(shortest: int | None, longest: int | None) -> str | None:
    if shortest and longest is not None:
        return f"{shortest:,} to {longest:,} characters"
    if shortest:
        return f"at least {shortest:,} character{'s' if shortest != 1 else ''}"
    if longest is not None:
        return f"at most {longest:,} character{'s' if longest != 1 else ''}"
    return None


def _text_constraints(spec: Mapping[str, Any], required: bool) -> Constraints:
    attributes: list[tuple[str, str]] = []
    words: list[tuple[str, bool]] = []
    shortest, longest = _count(spec.get("minLength")), _count(spec.get("maxLength"))
    # A blank required text is sent as "": only a minimum length makes it wrong.
    if required and shortest:
        attributes.append(("required", ""))
    if shortest:
        attributes.append(("minlength", str(shortest)))
    if longest is not None:
        attributes.append(("maxlength", str(longest)))
    length = _length_words(shortest, longest)
    if length:
        words.append((length, False))
    pattern = spec.get("pattern")
    pattern = pattern if isinstance(pattern, str) and pattern else ""
    if pattern:
        words.extend([("matches", False), (pattern, True)])
    return Constraints(tuple(attributes), pattern, tuple(words))


def constraints_of(kind: str, spec: Any, *, required: bool, integer: bool) -> Constraints:
    """The browser's share of a field's checks (see the module's docstring)."""
    spec = spec if isinstance(spec, Mapping) else {}
    if kind == "number":
        found = _number_constraints(spec, integer)
    elif kind in {"text", "textarea"}:
        return _text_constraints(spec, required)
    else:
        found = NO_CONSTRAINTS
    # A blank number, choice or JSON field is left out of the input: wrong when required.
    if required and kind in {"number", "select", "json"}:
        return Constraints((("required", ""), *found.attributes), found.pattern, found.words)
    return found
