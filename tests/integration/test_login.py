"""Sign in: `/accounts/login/`."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_it_shows_the_sign_in_form_without_a_session(client: Client) -> None:
    response = client.get("/accounts/login/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "<h1>Sign in</h1>" in page
    assert 'name="username"' in page
    assert 'name="password"' in page
    assert "csrfmiddlewaretoken" in page


def test_the_ensured_admin_can_sign_in_and_lands_on_the_home_page(
    client: Client, ensured_admin: tuple[str, str]
) -> None:
    username, password = ensured_admin

    response = client.post(
        "/accounts/login/", {"username": username, "password": password}, follow=True
    )

    assert response.redirect_chain == [("/", 302)]
    assert "<h1>Graphs</h1>" in response.content.decode()


def test_it_returns_to_the_page_asked_for(client: Client, ensured_admin: tuple[str, str]) -> None:
    username, password = ensured_admin

    response = client.post(
        "/accounts/login/", {"username": username, "password": password, "next": "/healthz"}
    )

    assert response["Location"] == "/healthz"


def test_a_wrong_password_is_refused_with_a_message(
    client: Client, ensured_admin: tuple[str, str]
) -> None:
    response = client.post("/accounts/login/", {"username": "admin", "password": "not-it"})

    assert response.status_code == 200
    assert 'role="alert"' in response.content.decode()
    assert "_auth_user_id" not in client.session
