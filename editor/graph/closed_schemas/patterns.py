"""Schema patterns on RE2: linear time in the length of the text, whatever the pattern.

jsonschema matches ``pattern`` and ``patternProperties`` with Python's backtracking ``re``,
where ``^(a+)+$`` against thirty characters takes seconds and doubles with each one more.
RE2 guarantees time linear in the text; in exchange it has no backreferences and no
lookaround, which :func:`pattern_error` reports. Its syntax is also closer to ECMA-262's, the
dialect JSON Schema names: ``$`` ends the text (no match before a final newline) and ``\\d``
is ASCII.

The keyword functions below are jsonschema's own (same messages), with every ``re.search``
replaced by :func:`search`. ``unevaluatedProperties`` needs jsonschema's helper that collects
the keys other keywords evaluated; it is copied here for the same reason, since the original
matches ``patternProperties`` with ``re``.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import re2
from jsonschema._utils import extras_msg as _extras
from jsonschema.exceptions import ValidationError

from editor.graph.closed_schemas.costs import spend

__all__ = ["KEYWORDS", "PatternUnsupported", "pattern_error", "search"]

#: Memory RE2 may use to compile one pattern (its default); larger patterns fail to compile.
_MAX_MEMORY = 8 << 20
_PATTERN_CACHE_SIZE = 4096


class PatternUnsupported(ValueError):
    """A pattern RE2 cannot compile; ``str()`` is RE2's reason."""


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    options.max_mem = _MAX_MEMORY
    return options


_OPTIONS = _options()


@lru_cache(maxsize=_PATTERN_CACHE_SIZE)
def _compiled(pattern: str) -> Any:
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as error:
        reason = error.args[0] if error.args else error
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternUnsupported(str(reason)) from None


def pattern_error(pattern: str) -> str | None:
    """RE2's reason for refusing ``pattern``, or ``None`` when it compiles."""
    try:
        _compiled(pattern)
    except PatternUnsupported as error:
        return str(error)
    return None


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` (JSON Schema's unanchored match)."""
    return _compiled(pattern).search(text) is not None


# --- jsonschema's keywords, on RE2 ----------------------------------------------------------


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            spend()  # patterns times keys: the caller's deadline holds inside this loop
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(instance: dict[str, Any], schema: dict[str, Any]) -> Iterator[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    for key in instance:
        spend()
        if key not in properties and not any(search(pattern, key) for pattern in patterns):
            yield key


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = set(_additional(instance, schema))
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            listed, verb = _extras(sorted(extras, key=str))
            yield ValidationError(
                f"Additional properties are not allowed ({listed} {verb} unexpected)"
            )


def _is_valid(errors: Iterator[ValidationError]) -> bool:
    return next(errors, None) is None


def _evaluated_keys(validator: Any, instance: dict[str, Any], schema: Any) -> list[str]:
    """The keys of ``instance`` that ``schema``'s keywords evaluate (jsonschema's
    ``find_evaluated_property_keys_by_schema``, matching patterns on RE2)."""
    if validator.is_type(schema, "boolean"):
        return []
    evaluated: list[str] = []
    for keyword in ("$ref", "$dynamicRef"):
        reference = schema.get(keyword)
        if reference is not None:
            resolved = validator._resolver.lookup(reference)
            evaluated += _evaluated_keys(
                validator.evolve(schema=resolved.contents, _resolver=resolved.resolver),
                instance,
                resolved.contents,
            )
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        evaluated += properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        subschema = schema.get(keyword)
        if subschema is not None:
            evaluated += (
                key
                for key, value in instance.items()
                if _is_valid(validator.descend(value, subschema))
            )
    if "patternProperties" in schema:
        for key in instance:
            spend()
            if any(search(pattern, key) for pattern in schema["patternProperties"]):
                evaluated.append(key)
    for key, subschema in schema.get("dependentSchemas", {}).items():
        if key in instance:
            evaluated += _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if _is_valid(validator.descend(instance, subschema)):
                evaluated += _evaluated_keys(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            evaluated += _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                evaluated += _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            evaluated += _evaluated_keys(validator, instance, schema["else"])
    return evaluated


def _unevaluated_properties(
    validator: Any, unevaluated: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    failing = [
        key  # once per error, as jsonschema lists them
        for key in instance
        if key not in evaluated
        for _ in validator.descend(instance[key], unevaluated, path=key, schema_path=key)
    ]
    if not failing:
        return
    if unevaluated is False:
        listed, verb = _extras(sorted(failing, key=str))
        yield ValidationError(
            f"Unevaluated properties are not allowed ({listed} {verb} unexpected)"
        )
    else:
        listed, verb = _extras(failing)
        yield ValidationError(
            "Unevaluated properties are not valid under the given schema "
            f"({listed} {verb} unevaluated and invalid)"
        )


#: The keywords that replace jsonschema's Draft 2020-12 ones.
KEYWORDS = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "unevaluatedProperties": _unevaluated_properties,
}
