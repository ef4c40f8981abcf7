"""Hypothesis strategies shared by the unit tests."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["json_values"]


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
