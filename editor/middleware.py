"""The boundary of ``/v1``: what must happen before the API runs, or after it answered.

* A body over ``GATEHOUSE_MAX_BODY_BYTES`` (by its ``Content-Length``) is refused with
  ``413 payload_too_large`` before anything reads or parses it.
* A failure answered outside ninja's operations — ninja's own ``405`` for a method a
  route does not take, or Django's plain-text or HTML error pages — is rewritten into
  the API's error envelope, so nothing under ``/v1/`` is ever an HTML error page.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

from editor.api.errors import payload_too_large, status_response

__all__ = ["ApiBoundaryMiddleware"]

API_PREFIX = "/v1/"


class ApiBoundaryMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if not request.path_info.startswith(API_PREFIX):
            return self.get_response(request)
        limit = settings.GATEHOUSE_MAX_BODY_BYTES
        if _declared_length(request) > limit:
            return payload_too_large(limit)
        response = self.get_response(request)
        if response.status_code >= 400 and not _is_json(response):
            return _enveloped(response)
        return response


def _declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        # Django reads a malformed length as 0 too: no body is read.
        return 0


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
