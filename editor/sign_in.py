"""Limits on sign-in attempts (spec 07): 5 failures per 15 minutes per username and per address.

django-axes does the counting, in the database (so every web process on every machine shares
the counts); the settings under "Sign-in and security" choose its rule. This module holds the
three pieces that are ours: the authentication backend that asks Axes first, where a request
comes from, and the page a locked-out person sees.
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.helpers import get_cool_off
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

__all__ = ["LOCKED_OUT_STATUS", "SignInLimitBackend", "client_address", "locked_out"]

#: 429 Too Many Requests: the attempt was refused for its number, not for its password.
LOCKED_OUT_STATUS = 429


class SignInLimitBackend(AxesStandaloneBackend):
    """Refuses every sign-in of a locked-out username or address, before any password check.

    Only sign-ins made through a web request are counted. ``authenticate()`` without a request
    (a management command, a test client's ``login()``) has no address and is not what the
    limit is for, so it goes on to the next backend instead of failing as Axes would.
    """

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


def client_address(request: HttpRequest) -> str | None:
    """The address a sign-in came from.

    Behind a proxy every connection comes from the proxy, so the address is read from the
    header it writes (``GATEHOUSE_CLIENT_IP_HEADER``): its last entry, the one the proxy in
    front added; the earlier entries are whatever the client sent and prove nothing.
    """
    header = settings.GATEHOUSE_CLIENT_IP_HEADER
    if header:
        forwarded = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
        last = forwarded.rsplit(",", 1)[-1].strip()
        if last:
            return last
    return request.META.get("REMOTE_ADDR")


def locked_out(request: HttpRequest, credentials: dict[str, Any] | None = None) -> HttpResponse:
    """The answer to a sign-in refused for too many failures: a page saying so, and how long."""
    cool_off = get_cool_off(request)
    minutes = round(cool_off.total_seconds() / 60) if cool_off else None
    return render(
        request, "registration/locked_out.html", {"minutes": minutes}, status=LOCKED_OUT_STATUS
    )
