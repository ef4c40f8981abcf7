"""Failed sign-ins are limited (spec 07): 5 failures lock out the username, and separately the
address they came from, until 15 minutes pass without a failure; a success clears the count.

The sign-in form and the admin's share the limit. API tokens are not sign-ins: a locked-out
user's programs keep working.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.utils import timezone
from pytest_django import Settings

from editor.sign_in import client_address
from tests.integration.api.callers import bearer_caller

pytestmark = pytest.mark.django_db

PASSWORD = "a-sign-in-test-password-5512"
LOCKED_OUT = "Too many failed sign-in attempts; try again in 15 minutes."


@pytest.fixture
def ada() -> User:
    return User.objects.create_user("ada", password=PASSWORD)


@pytest.fixture
def bob() -> User:
    return User.objects.create_user("bob", password=PASSWORD)


def sign_in(username: str, password: str, *, address: str = "192.0.2.10") -> HttpResponse:
    return Client(REMOTE_ADDR=address).post(
        "/accounts/login/", {"username": username, "password": password}
    )


def signed_in(response: HttpResponse) -> bool:
    return response.status_code == 302 and response["Location"] == "/"


def fail(times: int, username: str = "ada", *, address: str = "192.0.2.10") -> HttpResponse:
    response = HttpResponse()
    for _ in range(times):
        response = sign_in(username, "wrong-password", address=address)
    return response


def test_four_failures_still_let_the_right_password_in(ada: User) -> None:
    fail(4)

    assert signed_in(sign_in("ada", PASSWORD))


def test_the_fifth_failure_locks_out_and_says_for_how_long(ada: User) -> None:
    fourth = fail(4)
    fifth = fail(1)

    assert fourth.status_code == 200
    assert "Please enter a correct username and password" in fourth.content.decode()
    assert fifth.status_code == 429
    assert LOCKED_OUT in fifth.content.decode()


def test_after_five_failures_the_right_password_is_refused(ada: User) -> None:
    fail(5)

    response = sign_in("ada", PASSWORD)

    assert response.status_code == 429
    page = response.content.decode()
    assert LOCKED_OUT in page
    assert "Traceback" not in page
    assert "sessionid" not in response.cookies


def test_the_username_is_locked_out_from_every_address(ada: User) -> None:
    fail(5, address="192.0.2.10")

    response = sign_in("ada", PASSWORD, address="198.51.100.20")

    assert response.status_code == 429


def test_the_address_is_locked_out_for_every_username(ada: User, bob: User) -> None:
    # One failure each for five usernames: guessing across accounts from one place.
    for username in ("ada", "bob", "carol", "dave", "erin"):
        fail(1, username)

    assert sign_in("bob", PASSWORD).status_code == 429
    assert signed_in(sign_in("bob", PASSWORD, address="198.51.100.20"))


def test_a_success_clears_the_failures(ada: User) -> None:
    fail(4)
    assert signed_in(sign_in("ada", PASSWORD))

    fail(4)

    assert signed_in(sign_in("ada", PASSWORD))


def test_the_lockout_ends_fifteen_minutes_after_the_last_failure(ada: User) -> None:
    fail(5)
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=14))
    assert sign_in("ada", PASSWORD).status_code == 429

    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))

    assert signed_in(sign_in("ada", PASSWORD))


def test_the_admin_sign_in_shares_the_limit(ada: User) -> None:
    ada.is_staff = True
    ada.save()
    fail(5)

    response = Client(REMOTE_ADDR="198.51.100.20").post(
        "/admin/login/", {"username": "ada", "password": PASSWORD, "next": "/admin/"}
    )

    assert response.status_code == 429
    assert LOCKED_OUT in response.content.decode()


def test_a_locked_out_users_api_token_still_works(ada: User) -> None:
    api = bearer_caller(ada)
    fail(5)

    response = api.get("/v1/graphs")

    assert response.status_code == 200


def test_a_locked_out_users_open_session_still_works(ada: User) -> None:
    browser = Client(REMOTE_ADDR="192.0.2.10")
    browser.force_login(ada)
    fail(5)

    assert browser.get("/account/").status_code == 200


def test_authenticating_without_a_request_is_not_counted(ada: User) -> None:
    # Management commands and scripts check passwords without a web request.
    fail(5)

    assert authenticate(username="ada", password=PASSWORD) == ada


def test_behind_a_proxy_the_address_is_the_one_the_proxy_wrote(
    ada: User, bob: User, settings: Settings
) -> None:
    settings.GATEHOUSE_CLIENT_IP_HEADER = "X-Forwarded-For"
    proxy = "10.0.0.1"

    def through_proxy(username: str, password: str, forwarded_for: str) -> HttpResponse:
        return Client(REMOTE_ADDR=proxy).post(
            "/accounts/login/",
            {"username": username, "password": password},
            headers={"X-Forwarded-For": forwarded_for},
        )

    for username in ("ada", "carol", "dave", "erin", "frank"):
        # A client cannot escape its address by prepending one of its own choosing.
        through_proxy(username, "wrong-password", f"203.0.113.{len(username)}, 192.0.2.10")

    assert through_proxy("bob", PASSWORD, "192.0.2.10").status_code == 429
    assert signed_in(through_proxy("bob", PASSWORD, "198.51.100.20"))


def test_without_a_proxy_header_the_address_is_the_connections(settings: Settings) -> None:
    settings.GATEHOUSE_CLIENT_IP_HEADER = None
    request = RequestFactory().get(
        "/", REMOTE_ADDR="192.0.2.10", headers={"X-Forwarded-For": "203.0.113.9"}
    )

    assert client_address(request) == "192.0.2.10"
