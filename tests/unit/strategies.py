"""Hypothesis strategies shared by the unit tests."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["json_schemas", "json_values"]


def json_values(
    *, max_text: int = 10, max_leaves: int = 20, max_items: int = 4, int64: bool = True
) -> st.SearchStrategy:
    """Plain JSON values: null, booleans, numbers, text, and lists and objects of them.

    With ``int64`` the integers stay within i64 ∪ u64, the values the reference reads as
    integers; without it they are unbounded, to exercise the integer → float rule.
    """
    integers = st.integers(min_value=-(2**63), max_value=2**64 - 1) if int64 else st.integers()
    return st.recursive(
        st.none()
        | st.booleans()
        | integers
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=max_text),
        lambda children: (
            st.lists(children, max_size=max_items)
            | st.dictionaries(st.text(max_size=max_text // 2 + 1), children, max_size=max_items)
        ),
        max_leaves=max_leaves,
    )


_KEYWORDS = [
    "$ref", "$dynamicRef", "$dynamicAnchor", "$anchor", "$id", "$schema", "$defs", "type",
    "pattern", "patternProperties", "properties", "additionalProperties", "items", "prefixItems",
    "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "unevaluatedProperties",
    "unevaluatedItems", "dependentSchemas", "contains", "multipleOf", "enum", "required",
]  # fmt: skip
_REFERENCES = ["#", "#/$defs/a", "#/properties", "#a", "#/items/0", "x.json", "#/$defs/a/$ref"]
_PATTERNS = ["^(a+)+$", "(a)\\1", "string", "a", "("]


def json_schemas() -> st.SearchStrategy:
    """Schema-shaped JSON values, sound or not: keywords (references, patterns, applicators)
    over any JSON, for checking that every schema gets an answer rather than an exception."""
    return st.recursive(
        st.booleans() | json_values(max_leaves=3),
        lambda children: st.dictionaries(
            st.sampled_from(_KEYWORDS),
            children
            | st.sampled_from(_REFERENCES + _PATTERNS)
            | st.lists(children, max_size=3)
            | st.dictionaries(st.sampled_from(["a", "b", "^a$"]), children, max_size=3),
            max_size=5,
        ),
        max_leaves=12,
    )
