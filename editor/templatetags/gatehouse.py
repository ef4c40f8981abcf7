"""Filters every page may use (``{% load gatehouse %}``): how a content hash and a run id are
shown.

``{{ graph_hash|short_hash }}`` is its first twelve hex digits, ``{{ graph_hash|hex_digits }}``
the whole hex without ``sha256:`` (the ``/g/<hex>/`` pages: ``{% url 'graph' h|hex_digits %}``).
The Python side is :func:`editor.graph.short_hash` and :func:`editor.graph.hex_digits`.
``{{ run_id|short_run }}`` is the start of a run's id, as lists and links show it;
``{{ value|json_text }}`` a JSON value on one line, cut short; ``{{ status|sleep_view }}`` a
sleeping run's wait as its pages show it (``runs/_sleeping.html``); ``{{ text|code_spans }}``
a message whose `backticked` words read as code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django import template
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import mark_safe

from editor.engine.status import instant
from editor.graph import hex_digits as _hex_digits
from editor.graph import short_hash as _short_hash
from editor.graph.durations import format_duration
from editor.graph.jsonio import canonical_text as _canonical_text

register = template.Library()

#: How many characters of a run's id (a UUID) stand for it where people read it.
SHORT_RUN_CHARS = 8


@register.filter
def short_hash(digest: object) -> str:
    return _short_hash(str(digest))


@register.filter
def hex_digits(digest: object) -> str:
    return _hex_digits(str(digest))


@register.filter
def short_run(run_id: object) -> str:
    return str(run_id)[:SHORT_RUN_CHARS]


_CODE_SPAN = re.compile(r"`([^`]+)`")


@register.filter
def code_spans(text: object) -> str:
    """Text whose `backticked` words are shown as code: the whole text is escaped first, and
    only ``<code>`` tags are added, so nothing of it can be markup."""
    return mark_safe(_CODE_SPAN.sub(r"<code>\1</code>", str(escape(str(text)))))


#: How many characters of a JSON value a one-line difference shows.
JSON_TEXT_CHARS = 80


@register.filter
def json_text(value: object) -> str:
    """A JSON value on one line, cut to :data:`JSON_TEXT_CHARS` (the compare page's diffs)."""
    text = _canonical_text(value)
    return text if len(text) <= JSON_TEXT_CHARS else text[: JSON_TEXT_CHARS - 1] + "…"


@dataclass(frozen=True)
class SleepView:
    """A sleeping run's wait as a person reads it (spec 08, *Editor and pages*)."""

    #: The recorded ``wake_at``, in UTC (the page shows it in the reader's time zone).
    wake_at: datetime
    #: The status says ``overdue``: the server's clock was past ``wake_at`` when it answered.
    overdue: bool
    #: ``1 h 30 min``: how long ago the wait ended (overdue), or how long is left (not yet).
    words: str


@register.filter
def sleep_view(status: Any) -> SleepView | None:
    """The wait of a sleeping run's status (``None`` for any other): overdue as the status
    says, the time left counted from now, rounded up as ``remaining_seconds`` is."""
    if not isinstance(status, dict) or status.get("state") != "sleeping":
        return None
    wake_at = instant(status.get("wake_at"))
    if wake_at is None:
        return None
    if status.get("overdue"):
        return SleepView(wake_at, True, format_duration(int(status.get("overdue_seconds") or 0)))
    left = max(1, -int((timezone.now() - wake_at).total_seconds() // 1))
    return SleepView(wake_at, False, format_duration(left))
