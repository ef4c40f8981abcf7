"""Quotas and rates on pages: an htmx edit refused is answered 200 with the message shown in
place (the page as it was), a full page gets a 413 or 429 page; operators see every user's usage
on one admin page."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from editor.models import Draft, UserUsage
from editor.services import documents
from tests.integration.api.callers import GRAPH, make_user

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def graph(author: User) -> str:
    documents.create_document(author, title="Flow", slug="flow", text=json.dumps(GRAPH))
    return "flow"


def add_node(client: Client, node_id: str, **extra: str) -> object:
    return client.post(
        "/graphs/flow/edit/add-node/",
        {"revision": str(Draft.objects.get().revision), "kind": "tool", "id": node_id},
        **extra,
    )


def test_an_htmx_edit_over_the_stored_bytes_quota_shows_the_message_in_place(
    author_client: Client, author: User, graph: str, settings: Settings
) -> None:
    settings.GATEHOUSE_QUOTA_STORED_BYTES = UserUsage.objects.get(pk=author.pk).stored_bytes + 10

    response = add_node(author_client, "extra", **HX)

    assert response.status_code == 200  # type: ignore[attr-defined]
    assert response["HX-Retarget"] == "#limit-message"  # type: ignore[index]
    assert response["HX-Reswap"] == "innerHTML"  # type: ignore[index]
    page = response.content.decode()  # type: ignore[attr-defined]
    assert "Quota reached." in page
    assert "(GATEHOUSE_QUOTA_STORED_BYTES)" in page
    assert "does not reset with time" in page
    assert Draft.objects.get().revision == 1
    # The page has the place the message goes.
    assert 'id="limit-message"' in author_client.get("/graphs/flow/").content.decode()


def test_a_form_post_past_the_write_rate_gets_a_429_page_with_retry_after(
    author_client: Client, graph: str, settings: Settings
) -> None:
    settings.GATEHOUSE_RATE_WRITES_PER_MINUTE = 1
    assert add_node(author_client, "one").status_code in (200, 302)  # type: ignore[attr-defined]

    response = add_node(author_client, "two")

    assert response.status_code == 429  # type: ignore[attr-defined]
    assert 1 <= int(response["Retry-After"]) <= 60  # type: ignore[index]
    page = response.content.decode()  # type: ignore[attr-defined]
    assert "Too many requests" in page
    assert "(GATEHOUSE_RATE_WRITES_PER_MINUTE)" in page
    assert "The count resets at" in page
    assert "two" not in Draft.objects.get().text


def test_an_htmx_edit_past_the_write_rate_is_answered_200_with_the_message(
    author_client: Client, graph: str, settings: Settings
) -> None:
    settings.GATEHOUSE_RATE_WRITES_PER_MINUTE = 1
    add_node(author_client, "one", **HX)

    response = add_node(author_client, "two", **HX)

    assert response.status_code == 200  # type: ignore[attr-defined]
    assert response["HX-Retarget"] == "#limit-message"  # type: ignore[index]
    assert "Too many requests." in response.content.decode()  # type: ignore[attr-defined]


def test_sign_in_attempts_are_counted_per_address(client: Client, settings: Settings) -> None:
    settings.GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE = 2
    for _ in range(2):
        client.post("/accounts/login/", {"username": "x", "password": "y"})

    response = client.post("/accounts/login/", {"username": "x", "password": "y"})

    assert response.status_code == 429
    assert "(GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE)" in response.content.decode()


def test_operators_see_every_users_usage_and_limits(
    client: Client, author: User, graph: str, settings: Settings
) -> None:
    settings.GATEHOUSE_QUOTA_DOCUMENTS = 7
    staff = make_user("sam")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    UserUsage.objects.filter(pk=author.pk).update(limits={"tokens": 3})
    client.force_login(staff)

    response = client.get("/admin/usage/")

    assert response.status_code == 200
    page = response.content.decode()
    used = UserUsage.objects.get(pk=author.pk).stored_bytes
    row = page[page.index('<th scope="row">ada</th>') :].split("</tr>", 1)[0]
    assert f"{used} / {settings.GATEHOUSE_QUOTA_STORED_BYTES}" in row
    assert "1 / 7" in row  # documents
    assert "0 / 3" in row  # tokens: her own limit
    assert "0 / 1000" in row  # runs this hour


def test_the_usage_page_lists_a_later_page_when_asked(client: Client, author: User) -> None:
    staff = make_user("sam")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client.force_login(staff)

    response = client.get("/admin/usage/", {"page": "2"})

    assert response.status_code == 200
    assert '<th scope="row">ada</th>' not in response.content.decode()


@pytest.mark.parametrize("page", ["abc", "0", "-1", "1.5", "٣", "9" * 30, "1" * 5000])
def test_the_usage_page_refuses_a_page_that_is_not_a_whole_number_naming_it(
    client: Client, page: str
) -> None:
    staff = make_user("sam")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client.force_login(staff)

    response = client.get("/admin/usage/", {"page": page})

    assert response.status_code == 400
    assert "`page` must be a whole number from 1 to" in response.content.decode()


def test_the_usage_page_is_for_staff_only(author_client: Client) -> None:
    response = author_client.get("/admin/usage/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_an_operator_sets_a_users_own_limits_in_the_admin(
    client: Client, author: User, graph: str
) -> None:
    staff = make_user("sam")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    url = f"/admin/editor/userusage/{author.pk}/change/"

    refused = client.post(url, {"limits": '{"documentz": 3}'})
    assert refused.status_code == 200
    assert "is not a limit" in refused.content.decode()
    saved = client.post(url, {"limits": '{"documents": 3}'})
    assert saved.status_code == 302
    assert UserUsage.objects.get(pk=author.pk).limits == {"documents": 3}


def test_the_admin_refuses_an_address_rate_as_one_users_limit(
    client: Client, author: User, graph: str
) -> None:
    staff = make_user("sam")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    url = f"/admin/editor/userusage/{author.pk}/change/"

    refused = client.post(url, {"limits": '{"address_writes_per_minute": 5000}'})

    assert refused.status_code == 200
    page = refused.content.decode()
    assert "is a limit of an address, not of a user" in page
    assert "only GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE sets it" in page
    assert UserUsage.objects.get(pk=author.pk).limits == {}
    # The form lists the limits it takes, without the address's.
    form = client.get(url).content.decode()
    assert "writes_per_minute" in form
    assert "Names: stored_bytes, documents, aliases, tokens, runs_per_hour, writes_per_minute." in (
        form
    )
