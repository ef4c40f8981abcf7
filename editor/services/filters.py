"""What the lists' filters share: the days of ``from`` and ``to``, read strictly.

The runs list (:mod:`editor.services.runs.filters`) and the inbox's tabs
(:mod:`editor.services.inbox.filters`) both keep what was recorded from one day to another,
in UTC: a day is ``YYYY-MM-DD`` in ASCII digits and ``from`` cannot be after ``to``; anything
else is :class:`InvalidRequest` naming the parameter.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

from editor.services.errors import InvalidRequest

__all__ = ["read_day", "read_days", "start_of"]

_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def read_day(name: str, text: str) -> date:
    """The day ``text`` (``YYYY-MM-DD``, ASCII digits) of the parameter ``name``."""
    if not _DAY.fullmatch(text):
        raise InvalidRequest(f"`{name}` must be a day written YYYY-MM-DD, not {text!r}", name)
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidRequest(f"`{name}` is not a day of the calendar: {text!r}", name) from None


def read_days(since: str | None, until: str | None) -> tuple[date | None, date | None]:
    """The days of ``from`` and ``to`` (blank or ``None``: no bound), ``from`` not after ``to``."""
    since_day = read_day("from", since) if since else None
    until_day = read_day("to", until) if until else None
    if since_day and until_day and since_day > until_day:
        raise InvalidRequest("`from` is after `to`", "from")
    return since_day, until_day


def start_of(day: date) -> datetime:
    """The first moment of ``day``, in UTC."""
    return datetime.combine(day, datetime.min.time(), UTC)
