"""A document's versions: `/graphs/<slug>/versions/`."""

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.graph import wire_value
from editor.graph.templates import approval_gate
from editor.services import documents
from tests.integration.api.callers import make_user
from tests.integration.html import assert_no_inline_script

pytestmark = pytest.mark.django_db


@pytest.fixture
def author() -> User:
    return make_user("<i>ada</i>", "authors")


@pytest.fixture
def reader_client(client: Client) -> Client:
    client.force_login(make_user("noel"))
    return client


@pytest.fixture
def frozen(author: User) -> documents.Frozen:
    text = json.dumps(wire_value(approval_gate("sha256:" + "c" * 64)))
    documents.create_document(author, title="Gate <flow>", text=text)
    return documents.freeze(author, "gate-flow", expected_revision=1, note="first <cut>")


def test_it_lists_number_hash_who_when_and_note(
    reader_client: Client, frozen: documents.Frozen
) -> None:
    response = reader_client.get("/graphs/gate-flow/versions/")

    page = response.content.decode()
    assert response.status_code == 200
    hex_digest = frozen.graph.removeprefix("sha256:")
    assert (
        f'<a href="/g/{hex_digest}/?document=gate-flow"><code>{hex_digest[:12]}</code></a>' in page
    )
    assert "<td>1</td>" in page
    assert "&lt;i&gt;ada&lt;/i&gt;" in page
    assert "first &lt;cut&gt;" in page
    assert "Gate &lt;flow&gt;" in page
    assert "<time datetime=" in page
    assert_no_inline_script(page)


def test_it_answers_htmx_with_the_rows_alone(
    reader_client: Client, frozen: documents.Frozen
) -> None:
    response = reader_client.get("/graphs/gate-flow/versions/", headers={"HX-Request": "true"})

    assert "HX-Request" in response["Vary"]
    assert response.content.decode().lstrip().startswith('<div id="version-rows">')


def test_it_says_when_nothing_is_frozen(reader_client: Client, author: User) -> None:
    documents.create_document(author, title="Empty")

    page = reader_client.get("/graphs/empty/versions/").content.decode()

    assert "Nothing frozen yet." in page


def test_it_answers_404_for_an_unknown_document(reader_client: Client) -> None:
    assert reader_client.get("/graphs/nope/versions/").status_code == 404
