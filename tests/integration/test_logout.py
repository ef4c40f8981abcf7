"""Sign out: `POST /accounts/logout/`."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_signing_out_ends_the_session_and_shows_sign_in(
    client: Client, ensured_admin: tuple[str, str]
) -> None:
    username, password = ensured_admin
    client.login(username=username, password=password)

    response = client.post("/accounts/logout/")

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/"
    assert client.get("/").status_code == 302


def test_signing_out_needs_a_post(client: Client, ensured_admin: tuple[str, str]) -> None:
    username, password = ensured_admin
    client.login(username=username, password=password)

    assert client.get("/accounts/logout/").status_code == 405
    assert client.get("/").status_code == 200


def test_signing_out_needs_the_csrf_token(ensured_admin: tuple[str, str]) -> None:
    client = Client(enforce_csrf_checks=True)
    username, password = ensured_admin
    client.login(username=username, password=password)

    assert client.post("/accounts/logout/").status_code == 403
    assert client.get("/").status_code == 200
