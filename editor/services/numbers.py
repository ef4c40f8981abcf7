"""Whole numbers a client typed into a form or a query string, read strictly.

Every integer the pages and services read from a request goes through :func:`strict_int`: the
one number reader of :mod:`editor.presentation.typed` (ASCII digits only, an optional leading
``-`` only when negative numbers are allowed, explicit bounds, a short text) with the service
error a request needs. A value that is not such a number raises :class:`InvalidNumber`, an
:class:`InvalidRequest` that names the field and the range, ready to be shown beside the field
or answered as a 400.
"""

from __future__ import annotations

from typing import Any

from editor.presentation.typed import whole_number
from editor.services.errors import InvalidRequest

__all__ = ["INT64_MAX", "InvalidNumber", "strict_int"]

#: The largest value of a database ``bigint``: the default upper bound.
INT64_MAX = 2**63 - 1


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
    value = whole_number(text, minimum=minimum, maximum=maximum)
    if value is None:
        raise InvalidNumber(field, minimum, maximum)
    return value
