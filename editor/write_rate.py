"""The write rate: every POST, PUT, PATCH and DELETE, of pages and ``/v1``, counted per user and
per address in the clock minute (``GATEHOUSE_RATE_WRITES_PER_MINUTE``,
``GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE``; ``editor.services.quotas`` keeps the counters in
the database, shared by every web process).

Past either rate the request is refused before its view runs: ``429 rate_limited`` with
``Retry-After`` on ``/v1``; on pages the limit page, or for htmx the message in place. The
address is the one the sign-in limit reads (``editor.sign_in.client_address``, behind a proxy
from ``GATEHOUSE_CLIENT_IP_HEADER``). An API client is counted as the user of its token.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponseBase

from editor.api.errors import over_limit
from editor.services.errors import RateLimited
from editor.services.quotas import count_write
from editor.services.tokens import user_for_token
from editor.sign_in import client_address
from editor.views.errors import DATABASE_ERRORS, over_limit_page

__all__ = ["WRITE_METHODS", "WriteRateMiddleware"]

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Never counted: the health check answers without the database (a write to it is a 405).
UNCOUNTED = frozenset({"/healthz"})
API_PREFIX = "/v1/"


class WriteRateMiddleware:
    """After the session is read (``request.user``), before any view or form reads the body."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.method in WRITE_METHODS and request.path_info not in UNCOUNTED:
            api = request.path_info.startswith(API_PREFIX)
            try:
                count_write(_writer(request, api), client_address(request))
            except RateLimited as error:
                return over_limit(error) if api else over_limit_page(request, error)
            except DATABASE_ERRORS:
                # The database is away: the view answers that (503) as it does for any
                # request, in the API's envelope or as the page; nothing to count meanwhile.
                pass
        return self.get_response(request)


def _writer(request: HttpRequest, api: bool) -> Any | None:
    """Who sends the request: the user of a bearer token on ``/v1``, else the session's."""
    if api:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            found = user_for_token(token.strip())
            if found is not None:
                return found
    user = getattr(request, "user", None)
    return user if user is not None and user.is_authenticated else None
