"""The error pages a browser gets: plain pages, never a traceback.

:func:`service_error_page` is the one place a service error becomes a page (the API's
counterpart is ``editor.api.errors``): ``editor.middleware.ServiceErrorPageMiddleware`` calls it
for whatever a page view lets through, so views catch only the errors they answer in place (a
form shown again with its problem). ``PAGE_ERRORS`` is its table, the most specific class
first: a missing thing is Django's ``404`` page, a missing role its ``403`` page, a value no
form sends a plain-text ``400`` that names it.

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

from django.core.exceptions import PermissionDenied
from django.core.handlers.exception import response_for_exception
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.template.loader import render_to_string
from django.utils.html import escape

from editor.services.errors import (
    InvalidRequest,
    NotAllowed,
    ServiceError,
    UnknownAgent,
    UnknownDocument,
    UnknownGraph,
    UnknownRun,
)

logger = logging.getLogger(__name__)

__all__ = [
    "DATABASE_ERRORS",
    "FAILED",
    "PAGE_ERRORS",
    "RETRY_AFTER_SECONDS",
    "UNAVAILABLE",
    "server_error",
    "service_error_page",
]

#: What Django raises when the database cannot be reached, or the connection was lost.
DATABASE_ERRORS = (OperationalError, InterfaceError)

#: How long a client is told to wait before trying again while the database is away.
RETRY_AFTER_SECONDS = 5


#: What each page says, also when its template cannot be drawn (a broken deployment).
UNAVAILABLE = "Gatehouse cannot reach its database right now; try again in a moment."
FAILED = "Gatehouse could not answer this request. The error has been logged."


#: What a page answers for each service error a view lets through: Django's 404 or 403 page
#: with this message, or ``400`` with the error itself as plain text (``None``). A class not in
#: the table (nor a subclass of one) is a bug where it is raised: the plain ``500`` page.
PAGE_ERRORS: dict[type[ServiceError], tuple[int, str | None]] = {
    UnknownRun: (404, "No run has this id."),
    UnknownGraph: (404, "No graph with this hash is stored."),
    UnknownDocument: (404, "No such graph."),
    UnknownAgent: (404, "No agent definition with this hash is stored."),
    NotAllowed: (403, "Your roles do not allow this."),
    InvalidRequest: (400, None),
}


def service_error_page(request: HttpRequest, error: Exception) -> HttpResponse | None:
    """The page for a service error, or ``None`` when ``error`` is not one the table maps."""
    for cls in type(error).__mro__:
        if cls in PAGE_ERRORS:
            status, message = PAGE_ERRORS[cls]
            break
    else:
        return None
    if status == 404:
        return response_for_exception(request, Http404(message))
    if status == 403:
        return response_for_exception(request, PermissionDenied(message))
    # Only a crafted request gets here: the forms send nothing a service refuses this way.
    return HttpResponseBadRequest(f"{error}.", content_type="text/plain")


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
        html = render_to_string(template, {"message": message})
    except Exception:
        # The last answer there is: never let drawing the error page fail the response.
        logger.exception("the error page %s could not be drawn", template)
        html = f"<!DOCTYPE html><title>Gatehouse</title><p>{escape(message)}</p>"
    return HttpResponse(html, status=status)
