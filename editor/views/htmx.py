"""The request the views see once django-htmx's middleware has run, for the type checker."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

__all__ = ["HtmxHttpRequest"]


class HtmxHttpRequest(HttpRequest):
    """An ``HttpRequest`` with ``request.htmx``, which ``HtmxMiddleware`` sets on every request
    (``settings.MIDDLEWARE``). Only an annotation: no view ever makes one."""

    htmx: HtmxDetails
