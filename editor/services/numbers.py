"""Whole numbers a client typed into a form or a query string, read strictly.

Every integer the pages and services read from a request goes through :func:`strict_int`:
ASCII digits only (``str.isdigit`` also accepts ``²`` and ``٣``, which ``int`` then refuses
or reads differently), an optional leading ``-`` only when negative numbers are allowed,
explicit bounds (a number past what the database stores fails the query rather than the
check), and a short text, so a megabyte of zeros is refused before it is converted. A value
that is not such a number raises :class:`InvalidNumber`, an :class:`InvalidRequest` that
names the field and the range, ready to be shown beside the field or answered as a 400.
"""

from __future__ import annotations

from typing import Any

from editor.services.errors import InvalidRequest

__all__ = ["INT64_MAX", "U32_MAX", "InvalidNumber", "strict_int"]

#: The largest value of a database ``bigint``: the default upper bound.
INT64_MAX = 2**63 - 1
#: The graph format's ``u32`` fields (a map's concurrency, a fold's passes).
U32_MAX = 2**32 - 1

_ASCII_DIGITS = frozenset("0123456789")


class InvalidNumber(InvalidRequest):
    """``field`` is not a whole number from ``minimum`` to ``maximum``."""

    def __init__(self, field: str, minimum: int, maximum: int) -> None:
        self.minimum = minimum
        self.maximum = maximum
        #: The range in words, for a message beside a form field.
        self.expected = f"a whole number from {minimum} to {maximum}"
        super().__init__(f"`{field}` must be {self.expected}", field)


def strict_int(text: Any, field: str, *, minimum: int = 0, maximum: int = INT64_MAX) -> int:
    """``text`` as an integer from ``minimum`` to ``maximum`` (both included).

    ``text`` must be a ``str`` of ASCII digits, with a leading ``-`` only when ``minimum`` is
    negative; no spaces, signs or separators (strip typed text first). Raises
    :class:`InvalidNumber` naming ``field`` otherwise.
    """
    if minimum > maximum:
        raise ValueError("minimum is above maximum")
    if not isinstance(text, str):
        raise InvalidNumber(field, minimum, maximum)
    digits = text[1:] if text.startswith("-") and minimum < 0 else text
    longest = len(str(max(abs(minimum), abs(maximum))))
    # Leading zeros are harmless, but a bounded number needs only so many characters.
    if not digits or len(digits) > longest + 8 or not _ASCII_DIGITS.issuperset(digits):
        raise InvalidNumber(field, minimum, maximum)
    value = int(text)
    if not minimum <= value <= maximum:
        raise InvalidNumber(field, minimum, maximum)
    return value
