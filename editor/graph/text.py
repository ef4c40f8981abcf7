"""Unicode ``White_Space``, as the reference (Rust's ``char::is_whitespace``) defines it.

Python's ``str.isspace``/``str.strip`` disagree on a few characters: they treat
U+001C–U+001F as whitespace, which ``White_Space`` does not. Names (spec 02) and
the expression lexer (spec 03) use this set.
"""

from __future__ import annotations

__all__ = ["WHITE_SPACE", "is_blank", "trim"]

WHITE_SPACE = frozenset(
    "\u0009\u000a\u000b\u000c\u000d\u0020\u0085\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_WHITE_SPACE_TEXT = "".join(sorted(WHITE_SPACE))


def trim(text: str) -> str:
    """``text`` without leading and trailing ``White_Space`` characters."""
    return text.strip(_WHITE_SPACE_TEXT)


def is_blank(text: str) -> bool:
    """Whether ``text`` is empty once ``White_Space`` is trimmed."""
    return not trim(text)
