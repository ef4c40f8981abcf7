"""The request boundary: what must happen before the app runs, or after it answered.

``/v1`` (:class:`ApiBoundaryMiddleware`):

* A body over its route's cap (``editor.body_limits``: ``GATEHOUSE_MAX_BODY_BYTES`` unless the
  route takes less) is refused with ``413 payload_too_large`` before anything parses it.
* A failure answered outside ninja's operations — ninja's own ``405`` for a method a
  route does not take, or Django's plain-text or HTML error pages — is rewritten into
  the API's error envelope, so nothing under ``/v1/`` is ever an HTML error page.

Pages (:class:`ServiceErrorPageMiddleware`): a service error a view lets through becomes its
page (``editor.views.errors.service_error_page``: ``404``, ``403`` or ``400``), the one mapping
for every page as ``editor.api.errors`` is for ``/v1``.

Pages (:class:`BodySizeLimitMiddleware`): a body over its route's cap is refused with a plain
``413`` page, before the session, the CSRF check or a form reads it. Without it Django would
answer a form over its own cap with a bare ``400``, and would spool a large uploaded file to
disk whatever its size (``DATA_UPLOAD_MAX_MEMORY_SIZE`` does not count files). Under ASGI the
handler has already stopped reading such a body at the cap (``editor.asgi``); a body without a
``Content-Length`` is never read at all under WSGI, so there the declared length is the check.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.conf import settings
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    HttpResponsePermanentRedirect,
)
from django.template.loader import render_to_string

from editor.api.errors import payload_too_large, status_response
from editor.body_limits import refused_cap
from editor.views.errors import service_error_page

__all__ = [
    "ApiBoundaryMiddleware",
    "BodySizeLimitMiddleware",
    "RenamedDocumentMiddleware",
    "ServiceErrorPageMiddleware",
]

API_PREFIX = "/v1/"


class ApiBoundaryMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if not request.path_info.startswith(API_PREFIX):
            return self.get_response(request)
        limit = refused_cap(request)
        if limit is not None:
            return payload_too_large(limit)
        response = self.get_response(request)
        if response.status_code >= 400 and not _is_json(response):
            return _enveloped(response)
        return response


_DOCUMENT_PATH = re.compile(r"\A/(?:graphs|v1/documents)/(?P<slug>[a-z0-9-]{1,64})(?=/|\Z)")


class RenamedDocumentMiddleware:
    """A document's old slug leads to its new one: a page or API path naming a slug a document
    was renamed from, answered ``404``, is redirected there instead (``301`` for a page read,
    ``308`` otherwise, which keeps the method and body)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if response.status_code != 404:
            return response
        match = _DOCUMENT_PATH.match(request.path_info)
        if match is None:
            return response
        from editor.services.documents.rows import renamed_to

        target = renamed_to(match["slug"])
        if target is None:
            return response
        path = request.path_info[: match.start("slug")] + target + request.path_info[match.end() :]
        query = request.META.get("QUERY_STRING")
        location = path + (f"?{query}" if query else "")
        reading_a_page = request.method in ("GET", "HEAD") and not path.startswith("/v1/")
        redirect = HttpResponsePermanentRedirect(location)
        if not reading_a_page:
            redirect.status_code = 308
        return redirect


class ServiceErrorPageMiddleware:
    """A page view's uncaught service error becomes its page (``/v1`` maps its own)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if request.path_info.startswith(API_PREFIX):
            return None
        return service_error_page(request, exception)


class BodySizeLimitMiddleware:
    """A page request whose body is over the cap gets a plain 413 page; /v1 is answered earlier."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        limit = refused_cap(request)
        if limit is not None:
            return _payload_too_large_page(limit)
        return self.get_response(request)


def _payload_too_large_page(limit: int) -> HttpResponse:
    # Rendered without the request: no session, no user, nothing that reads the body.
    megabytes = limit / (1024 * 1024)
    size = f"{megabytes:g} MiB" if megabytes >= 1 else f"{limit:,} bytes"
    html = render_to_string("413.html", {"limit": size})
    return HttpResponse(html, status=413)


def _is_json(response: HttpResponseBase) -> bool:
    return response.get("Content-Type", "").startswith("application/json")


def _enveloped(response: HttpResponseBase) -> HttpResponseBase:
    status = response.status_code
    if status == 413:
        return payload_too_large(settings.GATEHOUSE_MAX_BODY_BYTES)
    replacement = status_response(status)
    if "Allow" in response:
        replacement["Allow"] = response["Allow"]
    return replacement
