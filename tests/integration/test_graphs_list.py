"""The graphs list: `/` (it took over the home page)."""

import html
import json
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from editor.graph import wire_value
from editor.graph.templates import approval_gate
from editor.models import Document, Draft
from editor.services import documents
from tests.integration.api.callers import make_user
from tests.integration.html import assert_no_inline_script

pytestmark = pytest.mark.django_db

VALID = json.dumps(wire_value(approval_gate("sha256:" + "a" * 64)))


def test_it_sends_an_anonymous_visitor_to_sign_in(client: Client) -> None:
    response = client.get("/")

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"


def test_its_empty_state_tells_a_signed_in_user_what_gatehouse_is(
    client: Client, ensured_admin: tuple[str, str]
) -> None:
    username, password = ensured_admin
    assert client.login(username=username, password=password)

    page = client.get("/").content.decode()

    assert "No graphs yet" in page
    assert "agent workflows" in page
    assert 'href="/new/"' in page


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


def test_it_lists_each_document_with_its_draft_status_and_latest_version(
    author_client: Client, author: User
) -> None:
    documents.create_document(author, title="Good flow", text=VALID)
    documents.create_document(author, title="Broken flow", text="{")
    frozen = documents.freeze(author, "good-flow", expected_revision=1)

    page = author_client.get("/").content.decode()

    assert '<a href="/graphs/good-flow/">Good flow</a>' in page
    assert '<a href="/graphs/broken-flow/">Broken flow</a>' in page
    assert "✓ valid" in page
    assert "⚠ 1 error" in page
    hex_digest = frozen.graph.removeprefix("sha256:")
    assert f'href="/g/{hex_digest}/?document=good-flow"' in page
    assert f"<code>{hex_digest[:12]}</code>" in page
    assert "nothing frozen yet" in page


def test_its_search_filters_the_documents(author_client: Client, author: User) -> None:
    documents.create_document(author, title="Invoice approval")
    documents.create_document(author, title="Critic panel")

    page = author_client.get("/", {"q": "invoice"}).content.decode()

    assert "Invoice approval" in page
    assert "Critic panel</a>" not in page
    assert 'value="invoice"' in page


def test_its_search_answers_htmx_with_the_rows_alone(author_client: Client, author: User) -> None:
    documents.create_document(author, title="Invoice approval")
    documents.create_document(author, title="Critic panel")

    response = author_client.get("/", {"q": "critic"}, headers={"HX-Request": "true"})

    page = response.content.decode()
    assert response.status_code == 200
    assert "HX-Request" in response["Vary"]
    assert page.lstrip().startswith('<div id="graph-rows">')
    assert "<html" not in page
    assert "Critic panel" in page
    assert "Invoice approval" not in page


def test_it_says_when_nothing_matches_the_search(author_client: Client, author: User) -> None:
    documents.create_document(author, title="Invoice approval")

    page = author_client.get("/", {"q": "<b>zzz"}).content.decode()

    assert "No graph matches “&lt;b&gt;zzz”." in page


def test_it_escapes_a_hostile_title(author_client: Client, author: User) -> None:
    documents.create_document(author, title="<script>alert(1)</script>")

    response = author_client.get("/")

    page = response.content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert_no_inline_script(page)


def test_it_offers_new_graph_and_import_to_authors_only(
    author_client: Client, client: Client
) -> None:
    page = author_client.get("/").content.decode()
    assert ">New graph</a>" in page
    assert ">Import JSON</a>" in page

    reader = Client()
    reader.force_login(make_user("noel"))
    page = reader.get("/").content.decode()
    assert "New graph" not in page
    assert "Import JSON" not in page


def test_going_back_to_a_search_restores_the_whole_page(
    author_client: Client, author: User
) -> None:
    documents.create_document(author, title="Invoice approval")

    response = author_client.get(
        "/",
        {"q": "invoice"},
        headers={"HX-Request": "true", "HX-History-Restore-Request": "true"},
    )

    assert "<html" in response.content.decode()


def titles_on(page: str) -> list[str]:
    return re.findall(r'<a href="/graphs/[^/"]+/">([^<]+)</a>', page)


def older_link(page: str) -> str | None:
    found = re.search(r'href="(/\?cursor=[^"]+)">Older graphs</a>', page)
    return html.unescape(found.group(1)) if found else None


def test_it_shows_fifty_graphs_a_page_and_the_older_ones_behind_a_link(
    author_client: Client, author: User
) -> None:
    for n in range(53):
        documents.create_document(author, title=f"Notes {n:02d}")

    first = author_client.get("/").content.decode()

    assert titles_on(first) == [f"Notes {n:02d}" for n in range(52, 2, -1)]
    assert "Most recent graphs" not in first
    link = older_link(first)
    assert link is not None
    second = author_client.get(link).content.decode()
    assert titles_on(second) == ["Notes 02", "Notes 01", "Notes 00"]
    assert older_link(second) is None
    assert '<a class="button secondary" href="/">Most recent graphs</a>' in second


def test_its_pages_list_every_graph_once_when_many_changed_at_the_same_moment(
    author_client: Client, author: User
) -> None:
    for n in range(120):
        documents.create_document(author, title=f"Notes {n:03d}")
    Document.objects.update(updated_at=timezone.now())

    seen: list[str] = []
    link: str | None = "/"
    while link is not None:
        page = author_client.get(link).content.decode()
        seen += titles_on(page)
        link = older_link(page)

    assert sorted(seen) == [f"Notes {n:03d}" for n in range(120)]


def test_its_older_link_keeps_the_search(author_client: Client, author: User) -> None:
    for n in range(55):
        documents.create_document(author, title=f"Invoice {n:02d}")
        documents.create_document(author, title=f"Critic {n:02d}")

    first = author_client.get("/", {"q": "invoice"}, headers={"HX-Request": "true"})
    link = older_link(first.content.decode())

    assert link is not None and "q=invoice" in link
    second = author_client.get(link).content.decode()
    assert titles_on(second) == [f"Invoice {n:02d}" for n in range(4, -1, -1)]
    assert 'href="/?q=invoice">Most recent graphs</a>' in second


def test_it_refuses_a_cursor_it_did_not_hand_out_saying_so(author_client: Client) -> None:
    for cursor in ("nonsense", "WyIyMDI2LTEyLTAxVDEwOjAwOjAwIiwxXQ"):  # a time without a zone
        response = author_client.get("/", {"cursor": cursor})

        assert response.status_code == 400
        assert response.content.decode() == "The cursor is not one this server handed out."


def test_it_shows_the_verdict_stored_with_the_draft_without_validating_it_again(
    author_client: Client, author: User
) -> None:
    documents.create_document(author, title="Broken flow", text="{")
    Draft.objects.filter(document__slug="broken-flow").update(valid=False, error_count=7)

    page = author_client.get("/").content.decode()

    assert "⚠ 7 errors" in page
