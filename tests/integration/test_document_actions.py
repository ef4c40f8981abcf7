"""The editor's Document menu and the graphs list: rename, duplicate, archive, delete."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.models import Document, Version
from editor.services import documents, runs
from tests.integration.api.callers import make_user
from tests.integration.api.running import ECHO_CHAIN
from tests.integration.test_editor_page import approval_text

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _flow(author: User) -> None:
    documents.create_document(author, title="Approval flow", slug="flow", text=approval_text())


def test_renaming_moves_the_editor_and_the_old_address_leads_there(author_client: Client) -> None:
    response = author_client.post("/graphs/flow/rename/", {"title": "Launch", "slug": "launch"})

    assert response.status_code == 302 and response["Location"] == "/graphs/launch/"
    old = author_client.get("/graphs/flow/?node=write")
    assert old.status_code == 301 and old["Location"] == "/graphs/launch/?node=write"
    assert author_client.get("/graphs/flow/versions/")["Location"] == "/graphs/launch/versions/"
    page = author_client.get("/graphs/launch/").content.decode()
    assert "<h1>Launch" in page and "Renamed to “Launch” (launch)." in page


def test_a_slug_in_use_is_refused_with_a_message(author_client: Client, author: User) -> None:
    documents.create_document(author, title="Other", slug="other")

    author_client.post("/graphs/flow/rename/", {"title": "Flow", "slug": "other"})

    assert Document.objects.filter(slug="flow").exists()
    page = author_client.get("/graphs/flow/").content.decode()
    assert "The slug “other” is taken by another graph" in page


def test_duplicate_opens_the_copy(author_client: Client) -> None:
    response = author_client.post("/graphs/flow/duplicate/")

    assert response["Location"] == "/graphs/copy-of-approval-flow/"
    assert documents.read_draft("copy-of-approval-flow").text == approval_text()


def test_archive_hides_it_from_the_list_and_restore_brings_it_back(author_client: Client) -> None:
    author_client.post("/graphs/flow/archive/", {"archived": "1"})

    assert "Approval flow</a>" not in author_client.get("/").content.decode()
    archived = author_client.get("/?archived=1").content.decode()
    assert "Approval flow</a>" in archived and "Restore Approval flow" in archived

    author_client.post("/graphs/flow/archive/", {"archived": "0"})
    assert "Approval flow</a>" in author_client.get("/").content.decode()


def test_delete_asks_naming_what_goes_and_what_stays(author_client: Client, author: User) -> None:
    documents.freeze(author, "flow", expected_revision=1)

    page = author_client.get("/graphs/flow/").content.decode()

    assert "Its draft and its 1 saved revision go, and cannot be brought back." in page
    assert "Frozen versions stay (1), with any runs of them" in page
    response = author_client.post("/graphs/flow/delete/", follow=True)
    assert "Deleted flow: its draft and 1 saved revision. Frozen versions stay (1)" in (
        response.content.decode()
    )
    assert author_client.get("/graphs/flow/").status_code == 404
    assert Version.objects.count() == 1


def test_people_without_the_authors_role_cannot_manage(client: Client) -> None:
    client.force_login(make_user("rex"))

    assert client.post("/graphs/flow/delete/").status_code == 403
    assert client.post("/graphs/flow/archive/", {"archived": "1"}).status_code == 403
    assert "Document</summary>" not in client.get("/graphs/flow/").content.decode()
    assert Document.objects.get(slug="flow").archived_at is None


def test_a_run_of_a_deleted_document_names_it_without_a_link_to_its_gone_editor(
    author_client: Client, author: User
) -> None:
    documents.create_document(author, title="Echo", slug="echo", text=json.dumps(ECHO_CHAIN))
    frozen = documents.freeze(author, "echo", expected_revision=1)
    operator = make_user("otto", "operators")
    run = runs.start_run(operator, frozen.graph, {"text": "x"}, document_slug="echo")
    author_client.post("/graphs/echo/delete/")

    page = author_client.get(f"/runs/{run.run}/").content.decode()

    listed = author_client.get("/runs/").content.decode()

    for shown in (page, listed):
        assert "Echo (deleted)" in shown
        assert "/graphs/deleted-" not in shown
