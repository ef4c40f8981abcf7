"""The error pages a browser gets: plain pages, never a traceback.

``handler500`` is :func:`server_error`. It also answers for the database being unreachable:
the first query of a request is usually made by a middleware (the session, behind
``request.user``), where no view or middleware ``process_exception`` would see it, but every
uncaught exception reaches this handler. The API under ``/v1`` answers such failures itself
(``editor.api.errors``), and ``editor.middleware`` wraps whatever reaches it in its envelope.

The pages are rendered without the request, so drawing them needs no session, no user and no
database.
"""

from __future__ import annotations

import logging
import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.html import escape

logger = logging.getLogger(__name__)

__all__ = ["DATABASE_ERRORS", "FAILED", "RETRY_AFTER_SECONDS", "UNAVAILABLE", "server_error"]

#: What Django raises when the database cannot be reached, or the connection was lost.
DATABASE_ERRORS = (OperationalError, InterfaceError)

#: How long a client is told to wait before trying again while the database is away.
RETRY_AFTER_SECONDS = 5


#: What each page says, also when its template cannot be drawn (a broken deployment).
UNAVAILABLE = "Gatehouse cannot reach its database right now; try again in a moment."
FAILED = "Gatehouse could not answer this request. The error has been logged."


def server_error(request: HttpRequest) -> HttpResponse:
    """500, or 503 when the exception being handled is the database being unreachable."""
    error = sys.exc_info()[1]
    if isinstance(error, DATABASE_ERRORS):
        response = _page("503.html", UNAVAILABLE, status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    return _page("500.html", FAILED, status=500)


def _page(template: str, message: str, *, status: int) -> HttpResponse:
    try:
        html: str = render_to_string(template, {"message": message})
    except Exception:
        # The last answer there is: never let drawing the error page fail the response.
        logger.exception("the error page %s could not be drawn", template)
        html = f"<!DOCTYPE html><title>Gatehouse</title><p>{escape(message)}</p>"
    return HttpResponse(html, status=status)
