"""The Account page's password change, limited like sign-in (spec 07; ``editor.sign_in``).

A wrong current password counts as a failed sign-in of that username from that address,
in django-axes's database counts: five lock the password form (and signing in) until 15
minutes pass without a failure, so a stolen session cannot guess the password any faster
than the sign-in form could. The right one clears the count, as a successful sign-in does.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_client_ip_address, get_cool_off
from axes.models import AccessAttempt
from django.contrib.auth.signals import user_login_failed
from django.db.models import Max, Q
from django.http import HttpRequest
from django.utils import timezone

__all__ = [
    "count_right_password",
    "count_wrong_password",
    "lock_lifts_at",
    "password_change_allowed",
]


def _credentials(request: HttpRequest) -> dict[str, Any]:
    return {"username": request.user.get_username()}


def password_change_allowed(request: HttpRequest) -> bool:
    """Whether the signed-in user may try their current password now: their username and
    their address are both under the sign-in limit."""
    return bool(AxesProxyHandler.is_allowed(request, _credentials(request)))


def count_wrong_password(request: HttpRequest) -> bool:
    """Counts a wrong current password as a failed sign-in; whether the form is still open."""
    user_login_failed.send(sender=__name__, credentials=_credentials(request), request=request)
    # The form answers its own lockout (the page says when it lifts), not Axes's middleware
    # with the sign-in page.
    request.axes_locked_out = False  # type: ignore[attr-defined]
    return password_change_allowed(request)


def count_right_password(request: HttpRequest) -> None:
    """The right current password clears the failures of this username and this address, as
    a successful sign-in does (``AXES_RESET_ON_SUCCESS``)."""
    AxesProxyHandler.update_request(request)
    AxesProxyHandler.get_implementation().reset_user_attempts(request, _credentials(request))


def lock_lifts_at(request: HttpRequest) -> datetime:
    """When the form opens again: the cool-off after the latest failure of this username or
    from this address (each failure starts the wait again)."""
    cool_off = get_cool_off(request) or timedelta(minutes=15)
    address = getattr(request, "axes_ip_address", None) or get_client_ip_address(request)
    latest = AccessAttempt.objects.filter(
        Q(username=request.user.get_username()) | Q(ip_address=address)
    ).aggregate(latest=Max("attempt_time"))["latest"]
    return (latest or timezone.now()) + cool_off
