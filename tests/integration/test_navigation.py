"""The navigation bar at the top of every page (templates/base.html)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from pytest_django.asserts import assertContains, assertInHTML

pytestmark = pytest.mark.django_db


@pytest.fixture
def ada(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("ada", password="ada-passphrase-1")


@pytest.fixture
def staff(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("sam", password="sam-passphrase-1", is_staff=True)


def navigation(client: Client, url: str) -> str:
    """The ``<nav>`` element of the page at ``url``."""
    page = client.get(url).content.decode()
    start = page.index('<nav class="nav" aria-label="Main">')
    return page[start : page.index("</nav>", start) + len("</nav>")]


def test_it_offers_graphs_account_and_sign_out_to_a_signed_in_user(
    client: Client, ada: Any
) -> None:
    client.force_login(ada)

    nav = navigation(client, "/account/")

    assert '<a href="/">Graphs</a>' in nav
    assert 'href="/account/"' in nav
    assert '<span class="username" title="Signed in as ada">ada</span>' in nav
    assert "Account</span></a>" in nav
    assert '<form method="post" action="/accounts/logout/"' in nav
    assert "Sign out</button>" in nav


def test_it_links_only_to_pages_that_exist(client: Client, ada: Any) -> None:
    client.force_login(ada)

    nav = navigation(client, "/")

    assert '<a href="/inbox/">Inbox <span id="inbox-count"' in nav
    for name, href in (("Runs", "/runs/"), ("Agents", "/agents/"), ("Tools", "/tools/")):
        assert f'<a href="{href}">{name}</a>' in nav
    for href in ("/", "/account/", "/runs/", "/inbox/", "/agents/", "/tools/"):
        assert client.get(href).status_code == 200


def test_it_marks_the_page_being_shown(client: Client, ada: Any) -> None:
    client.force_login(ada)

    home = navigation(client, "/")
    account = navigation(client, "/account/")

    assert '<a href="/" aria-current="page">Graphs</a>' in home
    assert home.count('aria-current="page"') == 1
    assert '<a href="/">Graphs</a>' in account
    assert 'href="/account/" class="account-link" aria-current="page"' in account
    assert account.count('aria-current="page"') == 1


def test_the_account_link_stays_marked_on_a_refused_account_form(client: Client, ada: Any) -> None:
    client.force_login(ada)

    response = client.post("/account/tokens/", {"name": ""})

    assertContains(response, 'class="account-link" aria-current="page"')


def test_admin_is_offered_to_staff_only(client: Client, ada: Any, staff: Any) -> None:
    client.force_login(ada)
    assert ">Admin</a>" not in navigation(client, "/")

    client.force_login(staff)
    assertInHTML('<a href="/admin/">Admin</a>', navigation(client, "/"))


def test_an_anonymous_visitor_sees_only_the_name_of_the_site(client: Client) -> None:
    nav = navigation(client, "/accounts/login/")

    assert 'class="brand"' in nav
    for label in ("Graphs", "Account", "Admin", "Sign out", "/accounts/logout/"):
        assert label not in nav
