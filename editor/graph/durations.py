"""A delay's ``seconds`` as a person writes and reads it: ``1 h 30 min`` for 5400.

:func:`format_duration` is what the canvas and the node form show; :func:`parse_duration`
reads what a person types into the form: whole seconds (``5400``), or amounts with units,
spaced or not (``90m``, ``1h30m``, ``1 h 30 min``, ``2 days``). The document always stores
whole seconds (spec 08, section 1).
"""

from __future__ import annotations

import re

from editor.graph.model import U64_MAX

__all__ = ["format_duration", "parse_duration"]

_UNITS: tuple[tuple[str, int], ...] = (("d", 86400), ("h", 3600), ("min", 60), ("s", 1))
_SPELLINGS = {
    "d": 86400, "day": 86400, "days": 86400,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
}  # fmt: skip
_PART = re.compile(r"\s*([0-9]+)\s*([a-z]+)", re.ASCII)
_DIGITS = re.compile(r"[0-9]+", re.ASCII)


def format_duration(seconds: int) -> str:
    """``5400`` → ``1 h 30 min``; ``0`` → ``0 s``; units with a zero amount are left out."""
    if seconds <= 0:
        return f"{seconds} s"
    parts = []
    rest = seconds
    for unit, size in _UNITS:
        amount, rest = divmod(rest, size)
        if amount:
            parts.append(f"{amount} {unit}")
    return " ".join(parts)


def parse_duration(text: str) -> int | None:
    """Whole seconds from what a person typed, or ``None`` when it is not a duration (or is
    past the largest ``seconds`` a document holds). Each unit may appear once, largest first."""
    text = text.strip().lower()
    if _DIGITS.fullmatch(text):
        total = int(text)
        return total if total <= U64_MAX else None
    total = 0
    position = 0
    last_size = None
    while position < len(text):
        found = _PART.match(text, position)
        if found is None:
            return None
        size = _SPELLINGS.get(found[2])
        if size is None or (last_size is not None and size >= last_size):
            return None
        total += int(found[1]) * size
        last_size = size
        position = found.end()
        while position < len(text) and text[position] in " ,":
            position += 1
    if last_size is None or total > U64_MAX:
        return None
    return total
