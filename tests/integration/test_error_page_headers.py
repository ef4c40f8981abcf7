"""Every error page carries the security headers of every page: the Content-Security-Policy,
``X-Frame-Options`` and the others, whichever part of the app answered (a view, a middleware
that answers early, the sign-in limit, the last-chance error pages)."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.db import OperationalError, connection
from django.test import Client

PAGE_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}

pytestmark = pytest.mark.django_db


def assert_page_headers(response: Any, status: int) -> None:
    assert response.status_code == status
    for name, value in PAGE_HEADERS.items():
        assert response.get(name) == value, f"the {status} page's {name}: {response.get(name)}"
    policy = response.get("Content-Security-Policy", "")
    assert "frame-ancestors 'none'" in policy, f"the {status} page's CSP: {policy!r}"
    assert "script-src 'self'" in policy


@pytest.fixture
def browser(author: User) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(author)
    return client


def test_a_bad_host_gets_a_400_with_the_headers() -> None:
    assert_page_headers(Client().get("/", HTTP_HOST="evil.example"), 400)


def test_a_forbidden_action_gets_a_403_with_the_headers() -> None:
    nobody = Client()
    nobody.force_login(User.objects.create_user("nobody"))
    assert_page_headers(nobody.post("/agents/", {"name": "x"}), 403)


def test_a_missing_page_gets_a_404_with_the_headers(browser: Client) -> None:
    assert_page_headers(browser.get("/no-such-page/"), 404)


def test_a_method_not_allowed_gets_a_405_with_the_headers(browser: Client) -> None:
    assert_page_headers(browser.put("/healthz"), 405)


@pytest.mark.parametrize("path", ["/import/", "/accounts/login/", "/healthz"])
def test_a_body_over_the_cap_gets_a_413_page_with_the_headers(path: str) -> None:
    response = Client().post(path, "x" * (9 << 20), content_type="text/plain")
    assert_page_headers(response, 413)
    assert "Too large" in response.content.decode()


def test_the_apis_413_carries_them_too() -> None:
    response = Client().post("/v1/graphs", "x" * (9 << 20), content_type="application/json")
    assert_page_headers(response, 413)
    assert response.json()["error"]["code"] == "payload_too_large"


def test_a_locked_out_sign_in_gets_a_429_with_the_headers() -> None:
    User.objects.create_user("ada", password="a-correct-password-5512")
    client = Client(REMOTE_ADDR="192.0.2.10")
    for _ in range(5):
        response = client.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    assert_page_headers(response, 429)


def test_a_failure_gets_a_500_page_with_the_headers(browser: Client) -> None:
    with mock.patch(
        "editor.views.graphs.documents.list_documents", side_effect=RuntimeError("boom")
    ):
        assert_page_headers(browser.get("/"), 500)


def test_the_database_down_gets_a_503_page_with_the_headers(browser: Client) -> None:
    def refuse(*args: Any) -> None:
        raise OperationalError("could not connect to server: Connection refused")

    with connection.execute_wrapper(refuse):
        assert_page_headers(browser.get("/"), 503)
