"""The security headers every page carries, for answers that never pass the middleware.

Django's middleware (``SecurityMiddleware``, the CSP and ``X-Frame-Options`` ones) adds them to
every response the middleware sees. A few answers are written before it or beside it: the ASGI
handler's own (a request it cannot decode, its last-chance ``500``), and an error page of an
exception raised in the outermost middleware. :func:`add_page_headers` gives those the same
headers, from the same settings; a header already there is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.http import HttpResponseBase
from django.utils.csp import CSP, build_policy

__all__ = ["add_page_headers", "page_headers"]


def page_headers() -> dict[str, str]:
    """The headers the middleware gives a page (but ``Strict-Transport-Security``, which only
    an HTTPS answer may carry and which browsers keep from any of them)."""
    headers: dict[str, str] = {}
    policy: Mapping[str, Any] = settings.SECURE_CSP
    if policy:
        headers[str(CSP.HEADER_ENFORCE)] = build_policy(policy)
    if settings.X_FRAME_OPTIONS:
        headers["X-Frame-Options"] = settings.X_FRAME_OPTIONS
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        headers["X-Content-Type-Options"] = "nosniff"
    if settings.SECURE_REFERRER_POLICY:
        headers["Referrer-Policy"] = settings.SECURE_REFERRER_POLICY
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        headers["Cross-Origin-Opener-Policy"] = settings.SECURE_CROSS_ORIGIN_OPENER_POLICY
    return headers


def add_page_headers(response: HttpResponseBase) -> HttpResponseBase:
    for name, value in page_headers().items():
        response.headers.setdefault(name, value)
    return response
