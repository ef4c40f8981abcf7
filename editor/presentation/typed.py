"""What people type, read strictly: the one number reader and the one JSON reader of the forms.

Every whole number a form, a query string or a card reads goes through :func:`whole_number`
(the services' :func:`~editor.services.numbers.strict_int` is it, raising a service error);
every decimal a person types through :func:`decimal_number`; every JSON text typed into a form
through :func:`read_typed_json`. Each answers ``None`` (or a :class:`JsonProblem`) for text it
refuses, so the caller decides what to say beside the field.

Why strict: ``str.isdigit`` also accepts ``²`` and ``٣``, which ``int`` then refuses or reads
differently; ``int`` and ``float`` read ``1_000``, ``nan`` and ``inf``; a megabyte of zeros
should be refused before it is converted; and JSON typed by a person is read as the reference
reads a document (no NaN, no repeated keys), where a NUL no database stores is refused too.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from editor.graph import JsonError, JsonPosition, read_json
from editor.graph.jsonio import I64_MIN, nul_path
from editor.graph.model import U32_MAX, U64_MAX

__all__ = [
    "NUL_MESSAGE",
    "JsonProblem",
    "decimal_number",
    "read_typed_json",
    "whole_number",
]

_ASCII_DIGITS = frozenset("0123456789")
#: What a decimal field may hold: decimal ASCII, as a browser's number input sends it.
_DECIMAL = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)

#: What a form says of a value that holds the NUL character.
NUL_MESSAGE = "This cannot contain the NUL character (U+0000)."


def whole_number(text: Any, *, minimum: int = 0, maximum: int = U32_MAX) -> int | None:
    """``text`` as an integer from ``minimum`` to ``maximum`` (both included), else ``None``.

    ``text`` must be a ``str`` of ASCII digits, with a leading ``-`` only when ``minimum`` is
    negative; no spaces, signs or separators (strip typed text first), and no more characters
    than the bounds need (leading zeros are harmless, but only so many of them).
    """
    if minimum > maximum:
        raise ValueError("minimum is above maximum")
    if not isinstance(text, str):
        return None
    digits = text[1:] if text.startswith("-") and minimum < 0 else text
    longest = len(str(max(abs(minimum), abs(maximum))))
    if not digits or len(digits) > longest + 8 or not _ASCII_DIGITS.issuperset(digits):
        return None
    value = int(text)
    return value if minimum <= value <= maximum else None


def decimal_number(text: str, *, integer: bool) -> int | float | None:
    """``text`` (decimal ASCII, as a browser's number input sends it: ``-3``, ``2.5``, ``.5``,
    ``1e3``) as a number, else ``None``. A whole number within 64 bits stays an ``int``;
    ``integer``: a decimal with no fraction (``3.0``) becomes one too. Never NaN or infinite."""
    if _DECIMAL.fullmatch(text) is None:
        return None
    whole = whole_number(text, minimum=I64_MIN, maximum=U64_MAX)
    if whole is not None:
        return whole
    number = float(text)
    if not math.isfinite(number):
        return None
    if integer and number.is_integer():
        return int(number)
    return number


@dataclass(frozen=True, slots=True)
class JsonProblem:
    """Why typed text was refused: the strict reader's words (``error``), where it found the
    mistake when it says, or ``nul`` when the text is JSON but holds a NUL character."""

    error: str
    position: JsonPosition | None = None
    nul: bool = False

    def sentence(self) -> str:
        """The problem as a form says it beside the field (the inbox card's words)."""
        if self.nul:
            return NUL_MESSAGE
        return f"This is not valid JSON: {self.error}."


def read_typed_json(text: str, *, storable: bool = False) -> tuple[Any, JsonProblem | None]:
    """``(value, None)`` for JSON text a person typed, else ``(None, problem)``.

    ``storable``: a value holding a NUL character anywhere is refused too (the database would
    refuse it later, where the person could not be told which field)."""
    try:
        value = read_json(text)
    except JsonError as error:
        return None, JsonProblem(str(error), error.at)
    if storable and nul_path(value) is not None:
        return None, JsonProblem("the value contains the NUL character", nul=True)
    return value, None
