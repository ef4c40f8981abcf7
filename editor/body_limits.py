"""How large a request body each route takes: the one table the server's edge reads.

Under ASGI (``editor.asgi``) the handler counts a body's bytes as they arrive and stops reading
it as soon as its ``Content-Length`` or its running total passes the route's cap, so nothing past
the cap is ever held in memory or spooled to disk; under WSGI the declared length is the whole
check (a body without one is never read). Either way the request then reaches the middleware
marked as refused (:func:`refused_cap`), which answers ``413`` with the headers of every page.

Routes that take less than a graph document take a smaller cap, so that no one can make the
server read megabytes where a few kilobytes would do: an agent definition (the API and the
Agents page), the sign-in and password forms, and every request whose method carries no body.
Every cap is at most ``GATEHOUSE_MAX_BODY_BYTES`` (docs/operations.md, "Request bodies").
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings

__all__ = [
    "AGENT_BYTES",
    "NO_BODY_BYTES",
    "POLICY_BYTES",
    "REFUSED",
    "SIGN_IN_BYTES",
    "cap_for",
    "declared_length",
    "refused_cap",
]

#: An agent definition (TOML or JSON): the file's 256 KiB and room for the form around it.
AGENT_BYTES = 256 * 1024 + 16 * 1024
#: A sign-in, password or token form: a username, a few passwords, the CSRF token.
SIGN_IN_BYTES = 16 * 1024
#: A request whose method carries no body (and ``/healthz``, whatever its method).
NO_BODY_BYTES = 1024
#: A document's approval policy (the API's and the Approvals page's forms): a few hundred
#: bytes a gate, and a value to resolve with of at most 16 KiB each.
POLICY_BYTES = 512 * 1024

#: The scope key (ASGI) under which the handler notes the cap a request's body passed.
REFUSED = "gatehouse.body_refused"

_NO_BODY_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "DELETE", "TRACE"})

#: (method or None for any, the path, the cap) in order; the first that matches applies.
_ROUTES: tuple[tuple[str | None, re.Pattern[str], int], ...] = (
    (None, re.compile(r"/healthz/?"), NO_BODY_BYTES),
    ("POST", re.compile(r"/v1/agents/?"), AGENT_BYTES),
    ("POST", re.compile(r"/agents/"), AGENT_BYTES),
    ("POST", re.compile(r"/accounts/login/"), SIGN_IN_BYTES),
    ("POST", re.compile(r"/accounts/logout/"), SIGN_IN_BYTES),
    ("POST", re.compile(r"/account/password/"), SIGN_IN_BYTES),
    ("POST", re.compile(r"/account/tokens/(?:\d+/revoke/)?"), SIGN_IN_BYTES),
    ("POST", re.compile(r"/admin/login/"), SIGN_IN_BYTES),
    ("PUT", re.compile(r"/v1/documents/[^/]+/approvals/?"), POLICY_BYTES),
    ("POST", re.compile(r"/graphs/[^/]+/approvals/.*"), POLICY_BYTES),
)


def cap_for(method: str, path: str) -> int:
    """The most bytes a body of ``method`` on ``path`` may have."""
    largest: int = settings.GATEHOUSE_MAX_BODY_BYTES
    method = method.upper()
    for route_method, pattern, cap in _ROUTES:
        if (route_method is None or route_method == method) and pattern.fullmatch(path):
            return min(cap, largest)
    if method in _NO_BODY_METHODS:
        return min(NO_BODY_BYTES, largest)
    return largest


def declared_length(headers: Any) -> int:
    """The ``Content-Length`` of an ASGI scope's headers (pairs of bytes); 0 when absent or
    unreadable, as Django reads it (and then reads no body)."""
    for name, value in headers:
        if name.lower() == b"content-length":
            try:
                return max(0, int(value))
            except ValueError:
                return 0
    return 0


def refused_cap(request: Any) -> int | None:
    """The cap a request's body is over, or ``None``: under ASGI as the handler measured it
    (``Content-Length`` or the bytes that arrived), under WSGI by its ``Content-Length``."""
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict) and REFUSED in scope:
        return int(scope[REFUSED])
    cap = cap_for(request.method or "GET", request.path_info)
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None
    return cap if length > cap else None
