"""Filters every page may use (``{% load gatehouse %}``): how a content hash and a run id are
shown.

``{{ graph_hash|short_hash }}`` is its first twelve hex digits, ``{{ graph_hash|hex_digits }}``
the whole hex without ``sha256:`` (the ``/g/<hex>/`` pages: ``{% url 'graph' h|hex_digits %}``).
The Python side is :func:`editor.graph.short_hash` and :func:`editor.graph.hex_digits`.
``{{ run_id|short_run }}`` is the start of a run's id, as lists and links show it;
``{{ value|json_text }}`` a JSON value on one line, cut short.
"""

from __future__ import annotations

from django import template

from editor.graph import hex_digits as _hex_digits
from editor.graph import short_hash as _short_hash
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


#: How many characters of a JSON value a one-line difference shows.
JSON_TEXT_CHARS = 80


@register.filter
def json_text(value: object) -> str:
    """A JSON value on one line, cut to :data:`JSON_TEXT_CHARS` (the compare page's diffs)."""
    text = _canonical_text(value)
    return text if len(text) <= JSON_TEXT_CHARS else text[: JSON_TEXT_CHARS - 1] + "…"
