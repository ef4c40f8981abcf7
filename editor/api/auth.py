"""Who is calling: an API token (``Authorization: Bearer …``) or the browser's session.

Tokens are tried first, and a request that presents a valid one is never subject to
CSRF checks (a token is not sent by a browser on its own). A session-authenticated
write must pass Django's CSRF check, or it fails with ``403 csrf_failed``. No
credentials at all is ``401 unauthorized`` (ninja raises its ``AuthenticationError``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja.security import APIKeyCookie, HttpBearer
from ninja.utils import check_csrf

from editor.services.tokens import user_for_token

__all__ = ["AuthenticatedRequest", "BearerToken", "CsrfFailed", "SessionCookie", "api_auth"]

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


class AuthenticatedRequest(HttpRequest):
    """The request an operation behind :data:`api_auth` receives, for the type checker: ninja
    sets ``request.auth`` to what authenticated it, the caller's user. Only an annotation."""

    auth: User


class CsrfFailed(Exception):
    """A session-authenticated write without a valid CSRF token."""


class BearerToken(HttpBearer):
    """``Authorization: Bearer <token>``: an API token a user created on the account page.

    Reads the header itself: ninja's ``HttpBearer`` logs a header of any other scheme whole, at
    ERROR, when ``DEBUG`` is on — a real token under ``Token``, or a password under ``Basic``,
    would land in the log. Any other scheme is simply no token (``401`` unless a session
    signs the request), and nothing of the header is logged.
    """

    def __call__(self, request: HttpRequest) -> Any | None:
        scheme, _, token = request.headers.get(self.header, "").partition(" ")
        if scheme.lower() != self.openapi_scheme or not token:
            return None
        return self.authenticate(request, token)

    def authenticate(self, request: HttpRequest, token: str) -> Any | None:
        return user_for_token(token.strip())


class SessionCookie(APIKeyCookie):
    """The browser's session, with Django's CSRF check on writes."""

    param_name = settings.SESSION_COOKIE_NAME

    def __init__(self) -> None:
        super().__init__(csrf=True)

    def _get_key(self, request: HttpRequest) -> str | None:
        # The CSRF check runs in authenticate(), once we know the session is signed in:
        # a request with no credentials is a 401, not a CSRF failure.
        return request.COOKIES.get(self.param_name)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any | None:
        user = request.user
        if not user.is_authenticated:
            return None
        if request.method not in _SAFE_METHODS:
            # Buffer the body first: the check may read form fields, and the operation
            # still needs the raw bytes afterwards.
            request.body  # noqa: B018
            if check_csrf(request) is not None:
                raise CsrfFailed()
        return user


#: Every operation accepts either; a token wins when both are sent.
api_auth = [BearerToken(), SessionCookie()]
