"""``/live/``: the server-sent events a signed-in page listens to instead of polling (spec 06).

Every page's navigation bar shows the count of runs waiting for a person (``event: count``);
a live run's page also hears when the run's log grows (``event: run``), and fetches its live
fragment then. One stream per page: ``editor.streams.feeds.PageUpdates``.
"""

from __future__ import annotations

import uuid

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.views.decorators.http import require_safe

from editor.streams.feeds import PageUpdates, streaming_response


def _run(request: HttpRequest) -> str | None:
    try:
        return str(uuid.UUID(request.GET.get("run", "")))
    except ValueError:
        return None


def _seen(request: HttpRequest) -> int:
    value = request.GET.get("seen", "")
    return int(value) if value.isascii() and value.isdigit() else 0


@require_safe
def page_updates(request: HttpRequest) -> HttpResponseBase:
    person = request.user.pk if request.user.is_authenticated else None
    return streaming_response(request, PageUpdates(_run(request), _seen(request), person))
