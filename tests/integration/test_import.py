"""**Import JSON**: `/import/`."""

import json

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from pytest_django import Settings

from editor.graph import wire_value
from editor.graph.templates import approval_gate
from editor.models import Document, Version
from editor.services import documents
from tests.integration.api.callers import make_user
from tests.integration.html import assert_no_inline_script

pytestmark = pytest.mark.django_db

VALID = json.dumps(wire_value(approval_gate("sha256:" + "b" * 64)))


def test_it_shows_the_form(author_client: Client) -> None:
    response = author_client.get("/import/")

    page = response.content.decode()
    assert response.status_code == 200
    assert 'enctype="multipart/form-data"' in page
    assert_no_inline_script(page)


def test_it_answers_htmx_with_the_form_alone(author_client: Client) -> None:
    response = author_client.get("/import/", headers={"HX-Request": "true"})

    assert "HX-Request" in response["Vary"]
    assert response.content.decode().lstrip().startswith('<form id="import-form"')


def test_it_imports_pasted_text_as_the_draft_of_an_imported_graph(author_client: Client) -> None:
    response = author_client.post("/import/", {"text": VALID})

    page = response.content.decode()
    assert response.status_code == 200
    assert 'href="/graphs/imported-graph/"' in page
    assert documents.read_draft("imported-graph").text == VALID
    assert Document.objects.get().title == "Imported graph"
    assert not Version.objects.exists()


def test_it_names_a_file_import_after_the_file(author_client: Client) -> None:
    upload = SimpleUploadedFile("flow.json", VALID.encode(), content_type="application/json")

    author_client.post("/import/", {"file": upload})

    document = Document.objects.get()
    assert document.title == "flow"
    assert documents.read_draft(document.slug).text == VALID


def test_it_names_an_import_after_its_entry_nodes_display_name(author_client: Client) -> None:
    value = json.loads(VALID)
    value["nodes"][0]["payload"]["name"] = "Launch announcement"
    upload = SimpleUploadedFile("broken.json", json.dumps(value).encode())

    author_client.post("/import/", {"file": upload})

    assert Document.objects.get().title == "Launch announcement"


def test_a_title_typed_on_the_form_wins(author_client: Client) -> None:
    author_client.post("/import/", {"text": VALID, "title": "My flow"})

    assert Document.objects.get().slug == "my-flow"


def test_the_imported_page_offers_to_rename_it(author_client: Client) -> None:
    page = author_client.post("/import/", {"text": VALID}).content.decode()

    assert 'action="/graphs/imported-graph/rename/"' in page


def test_it_keeps_a_document_that_does_not_parse_and_shows_the_error(
    author_client: Client,
) -> None:
    response = author_client.post("/import/", {"text": '{"schema_version": 1,'})

    page = response.content.decode()
    assert response.status_code == 200
    assert "does not parse" in page
    assert 'class="parse-error"' in page
    assert documents.read_draft("imported-graph").text == '{"schema_version": 1,'


def test_it_links_the_versions_already_frozen_as_this_graph(
    author_client: Client, author: User
) -> None:
    documents.create_document(author, title="Original", text=VALID)
    frozen = documents.freeze(author, "original", expected_revision=1)

    page = author_client.post("/import/", {"text": VALID}).content.decode()

    hex_digest = frozen.graph.removeprefix("sha256:")
    assert f'href="/g/{hex_digest}/?document=original"' in page
    assert "Original — version 1" in page
    assert Version.objects.count() == 1


def test_it_refuses_an_empty_submission(author_client: Client) -> None:
    response = author_client.post("/import/", {"text": "  "})

    assert response.status_code == 200
    assert "Choose a file or paste a graph document." in response.content.decode()
    assert not Document.objects.exists()


def test_it_refuses_a_file_over_the_body_cap_with_a_plain_page(
    author_client: Client, settings: Settings
) -> None:
    settings.GATEHOUSE_MAX_BODY_BYTES = 100
    upload = SimpleUploadedFile("big.json", b" " * 200 + b"{}")

    response = author_client.post("/import/", {"file": upload})

    assert response.status_code == 413
    assert "larger than Gatehouse accepts (100 bytes at most)" in response.content.decode()
    assert not Document.objects.exists()


def test_it_refuses_a_file_that_is_not_utf8(author_client: Client) -> None:
    upload = SimpleUploadedFile("bad.json", b"\xff\xfe{}")

    response = author_client.post("/import/", {"file": upload})

    assert "not UTF-8" in response.content.decode()
    assert not Document.objects.exists()


def test_it_refuses_a_user_without_the_authors_role(client: Client) -> None:
    client.force_login(make_user("noel"))

    assert client.get("/import/").status_code == 403
    assert client.post("/import/", {"text": VALID}).status_code == 403
    assert not Document.objects.exists()
