"""Routes that take little refuse a large body by its declared length (the WSGI half of
``editor.body_limits``; ``test_asgi_body_cap.py`` has the half that counts arriving bytes)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.body_limits import AGENT_BYTES, SIGN_IN_BYTES
from tests.integration.api.callers import bearer_caller, error_of

pytestmark = pytest.mark.django_db


def test_an_agent_file_over_its_cap_is_refused_by_the_api(author: User) -> None:
    api = bearer_caller(author)
    response = api.post("/v1/agents", "# " + "x" * AGENT_BYTES, content_type="application/toml")
    assert response.status_code == 413
    assert error_of(response) == {
        "code": "payload_too_large",
        "message": f"the request body is larger than the limit of {AGENT_BYTES} bytes",
        "details": {"limit": AGENT_BYTES},
    }


def test_an_agent_file_within_its_cap_is_read(author: User) -> None:
    api = bearer_caller(author)
    response = api.post("/v1/agents", "# a comment", content_type="application/toml")
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_agent"


def test_a_sign_in_form_over_its_cap_gets_the_413_page() -> None:
    response = Client().post(
        "/accounts/login/", {"username": "ada", "password": "p" * SIGN_IN_BYTES}
    )
    assert response.status_code == 413
    assert f"{SIGN_IN_BYTES:,} bytes" in response.content.decode()


def test_a_password_form_over_its_cap_gets_the_413_page(author: User) -> None:
    client = Client()
    client.force_login(author)
    response = client.post("/account/password/", {"old_password": "p" * SIGN_IN_BYTES})
    assert response.status_code == 413
