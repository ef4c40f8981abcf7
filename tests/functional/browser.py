"""Helpers for the browser tests: waiting for htmx, and users with a signed-in browser.

The counters read here are kept by the init script the ``context`` fixture adds to every page.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth.models import Group, User
from django.test import Client
from playwright.sync_api import BrowserContext, Page

__all__ = [
    "PASSWORD",
    "htmx_settles",
    "make_user",
    "sign_in",
    "wait_for_htmx",
]

PASSWORD = "a-browser-test-password-9271"


def wait_for_htmx(page: Page) -> None:
    """Wait until htmx is loaded and no htmx request is in flight or settling."""
    page.wait_for_function(
        "() => window.htmx !== undefined && window.__htmxInFlight === 0"
        " && document.querySelectorAll('.htmx-request, .htmx-settling, .htmx-swapping')"
        ".length === 0"
    )


@contextmanager
def htmx_settles(page: Page) -> Iterator[None]:
    """Wait, after the block, for a swap that settled after the block began, then for quiet."""
    before = page.evaluate("() => window.__htmxSettles")
    yield
    page.wait_for_function("(before) => window.__htmxSettles > before", arg=before)
    wait_for_htmx(page)


def make_user(username: str, *, groups: tuple[str, ...] = ()) -> User:
    user = User.objects.create_user(username=username, password=PASSWORD)
    for name in groups:
        user.groups.add(Group.objects.get(name=name))
    return user


def sign_in(context: BrowserContext, user: User, url: str) -> None:
    """Give the browser a session of ``user`` without going through the sign-in form."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"]
    context.add_cookies([{"name": "sessionid", "value": cookie.value, "url": url}])
