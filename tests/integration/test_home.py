"""The home page: `/`."""

import pytest
from django.test import Client

from tests.integration.html import assert_no_inline_script

pytestmark = pytest.mark.django_db


def test_it_sends_an_anonymous_visitor_to_sign_in(client: Client) -> None:
    response = client.get("/")

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"


def test_it_tells_a_signed_in_user_what_gatehouse_is(
    client: Client, ensured_admin: tuple[str, str]
) -> None:
    username, password = ensured_admin
    assert client.login(username=username, password=password)

    response = client.get("/")

    assert response.status_code == 200
    page = response.content.decode()
    for kind in ("agent", "tool", "gate", "branch", "map", "fold"):
        assert f"<dt>{kind}</dt>" in page
    assert "Freeze versions" in page
    assert "approval inbox" in page


def test_its_navigation_bar_names_the_user_and_offers_sign_out(
    client: Client, ensured_admin: tuple[str, str]
) -> None:
    username, password = ensured_admin
    client.login(username=username, password=password)

    page = client.get("/").content.decode()

    assert 'class="brand"' in page
    assert f'<span class="username" title="Signed in as {username}">{username}</span>' in page
    assert '<form method="post" action="/accounts/logout/"' in page
    assert "Sign out</button>" in page


def test_it_has_no_inline_script(client: Client, ensured_admin: tuple[str, str]) -> None:
    username, password = ensured_admin
    client.login(username=username, password=password)

    response = client.get("/")

    assert_no_inline_script(response.content.decode())
    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_its_stylesheet_is_served_even_before_sign_in(client: Client) -> None:
    response = client.get("/static/css/app.css")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/css")
