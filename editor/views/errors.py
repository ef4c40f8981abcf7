"""The error pages a browser gets: plain pages, never a traceback.

:func:`service_error_page` is the one place a service error becomes a page (the API's
counterpart is ``editor.api.errors``): ``editor.middleware.ServiceErrorPageMiddleware`` calls it
for whatever a page view lets through, so views catch only the errors they answer in place (a
form shown again with its problem): a missing thing is Django's ``404`` page (``NOT_FOUND``
says which errors, and what the page says), a missing role its ``403`` page, a value no form
sends a plain-text ``400`` that names it.

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
from django.utils import timezone
from django.utils.html import escape

from editor.services.errors import (
    InvalidRequest,
    NotAllowed,
    OverLimit,
    QuotaExceeded,
    ServiceError,
    UnknownAgent,
    UnknownDocument,
    UnknownGraph,
    UnknownRun,
    mapped,
)
from editor.services.installation import MISCONFIGURED

logger = logging.getLogger(__name__)

__all__ = [
    "DATABASE_ERRORS",
    "FAILED",
    "FORBIDDEN",
    "NOT_FOUND",
    "RETRY_AFTER_SECONDS",
    "TOOLS_MISCONFIGURED",
    "UNAVAILABLE",
    "over_limit_page",
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
TOOLS_MISCONFIGURED = (
    "This installation's tools are misconfigured, so this page cannot be shown; an operator "
    "must fix the server's configuration (its log names what is wrong)."
)


#: The service errors a page answers with Django's 404 page, and what each says there.
NOT_FOUND: dict[type[ServiceError], str] = {
    UnknownRun: "No run has this id.",
    UnknownGraph: "No graph with this hash is stored.",
    UnknownDocument: "No such graph.",
    UnknownAgent: "No agent definition with this hash is stored.",
}
#: What the 403 page says for ``NotAllowed``.
FORBIDDEN = "Your roles do not allow this."


def service_error_page(request: HttpRequest, error: Exception) -> HttpResponse | None:
    """The page for a service error a view let through: Django's 404 page for a missing thing
    (:data:`NOT_FOUND`), its 403 page for a missing role, a plain-text ``400`` naming a value
    no form sends (``InvalidRequest``); ``None`` for anything else, which is a bug where it is
    raised (the plain ``500`` page)."""
    message = mapped(NOT_FOUND, error)
    if message is not None:
        return response_for_exception(request, Http404(message))
    if isinstance(error, OverLimit):
        return over_limit_page(request, error)
    if isinstance(error, NotAllowed):
        return response_for_exception(request, PermissionDenied(FORBIDDEN))
    if isinstance(error, InvalidRequest):
        # Only a crafted request gets here: the forms send nothing a service refuses this way.
        message = str(error)
        return HttpResponseBadRequest(
            f"{message[:1].upper()}{message[1:]}.", content_type="text/plain"
        )
    return None


def over_limit_page(request: HttpRequest, error: OverLimit) -> HttpResponse:
    """A quota (``413``) or a rate (``429``, with ``Retry-After``) refused to a page request.

    An htmx request gets ``200`` (htmx drops the body of a ``4xx``) with the message swapped into
    the page's ``#limit-message``, so what the person was editing stays as it was; any other
    request gets a page saying which limit and when it resets."""
    quota = isinstance(error, QuotaExceeded)
    text = str(error)
    context = {
        "heading": "Quota reached" if quota else "Too many requests",
        "message": f"{text[:1].upper()}{text[1:]}.",
        "resets_in": error.retry_after(timezone.now()),
    }
    retry_after = context["resets_in"]
    if request.headers.get("HX-Request") == "true":
        response = HttpResponse(render_to_string("_limit.html", context))
        response["HX-Retarget"] = "#limit-message"
        response["HX-Reswap"] = "innerHTML"
    else:
        status = 413 if quota else 429
        response = HttpResponse(render_to_string("limit.html", context), status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """500, or 503 when the exception being handled is the database being unreachable."""
    error = sys.exc_info()[1]
    if isinstance(error, DATABASE_ERRORS):
        response = _page("503.html", UNAVAILABLE, status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    if isinstance(error, MISCONFIGURED):
        return _page("503.html", TOOLS_MISCONFIGURED, status=503)
    return _page("500.html", FAILED, status=500)


def _page(template: str, message: str, *, status: int) -> HttpResponse:
    try:
        html: str = render_to_string(template, {"message": message})
    except Exception:
        # The last answer there is: never let drawing the error page fail the response.
        logger.exception("the error page %s could not be drawn", template)
        html = f"<!DOCTYPE html><title>Gatehouse</title><p>{escape(message)}</p>"
    return HttpResponse(html, status=status)
