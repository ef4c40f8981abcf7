"""``/healthz``: answers without a session, for load balancers and the Docker health check.

Two forms of the same answer: :func:`healthz`, the view (WSGI: the test server, ``runserver``),
and :func:`answer_health_check`, which the ASGI handler (``editor.asgi``) calls before Django:
pure async code that takes no thread at all, so that nothing queued on any thread (slow canvas
layouts, thousands of streams opening) can make a working process look dead to a proxy.
"""

from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

__all__ = ["answer_health_check", "healthz"]

HEALTHY = b'{"status": "ok"}'

#: What the middleware would add to the view's answer (a JSON body needs no more than this).
_HEADERS = [
    (b"cache-control", b"max-age=0, no-cache, no-store, must-revalidate, private"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'"),
    (b"referrer-policy", b"same-origin"),
]


@login_not_required
@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


async def answer_health_check(scope: dict[str, Any], send: Any) -> None:
    """The view's answer as ASGI messages: ``200 {"status": "ok"}`` to ``GET`` and ``HEAD``,
    ``405`` to anything else. The request's body, if any, is never read."""
    method = scope.get("method", "GET")
    if method in ("GET", "HEAD"):
        status, body = 200, HEALTHY
        headers = [(b"content-type", b"application/json"), *_HEADERS]
    else:
        status, body = 405, b""
        headers = [(b"allow", b"GET, HEAD"), *_HEADERS]
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})
