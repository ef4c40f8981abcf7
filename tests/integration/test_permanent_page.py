"""The permanent page of a graph: `/g/<hex>/`, and **Download JSON**."""

import hashlib
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
def reader_client(client: Client) -> Client:
    client.force_login(make_user("noel"))
    return client


@pytest.fixture
def hex_digest(author: User) -> str:
    text = json.dumps(wire_value(approval_gate("sha256:" + "d" * 64)))
    documents.create_document(author, title="Gate <flow>", text=text)
    return documents.freeze(author, "gate-flow", expected_revision=1).graph.removeprefix("sha256:")


def test_it_shows_the_canvas_the_json_and_download(reader_client: Client, hex_digest: str) -> None:
    response = reader_client.get(f"/g/{hex_digest}/")

    page = response.content.decode()
    assert response.status_code == 200
    assert "<svg" in page
    assert "&quot;schema_version&quot;: 1" in page
    assert f'href="/g/{hex_digest}/download/"' in page
    assert "Download JSON" in page
    assert "Start run" not in page
    assert "canvas fragment" not in page
    assert_no_inline_script(page)


def test_reached_from_a_document_it_offers_compare_and_names_the_download(
    reader_client: Client, hex_digest: str
) -> None:
    page = reader_client.get(f"/g/{hex_digest}/?document=gate-flow").content.decode()

    assert f'href="/g/{hex_digest}/download/?document=gate-flow"' in page
    assert 'action="/graphs/gate-flow/compare/"' in page
    assert '<option value="draft">the draft</option>' in page
    assert "Gate &lt;flow&gt;" in page


def test_it_answers_htmx_with_the_json_alone(reader_client: Client, hex_digest: str) -> None:
    response = reader_client.get(f"/g/{hex_digest}/", headers={"HX-Request": "true"})

    assert "HX-Request" in response["Vary"]
    assert response.content.decode().lstrip().startswith('<section class="card" id="graph-json">')


def test_its_download_is_the_canonical_bytes_named_by_hash(
    reader_client: Client, hex_digest: str
) -> None:
    response = reader_client.get(f"/g/{hex_digest}/download/")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert hashlib.sha256(response.content).hexdigest() == hex_digest
    assert response["Content-Disposition"] == f'attachment; filename="{hex_digest[:12]}.json"'


def test_its_download_from_a_document_carries_the_slug(
    reader_client: Client, hex_digest: str
) -> None:
    response = reader_client.get(f"/g/{hex_digest}/download/", {"document": "gate-flow"})

    assert hashlib.sha256(response.content).hexdigest() == hex_digest
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="gate-flow-{hex_digest[:12]}.json"'
    )


def test_the_prefixed_hash_redirects_to_the_page(reader_client: Client, hex_digest: str) -> None:
    response = reader_client.get(f"/g/sha256:{hex_digest}/")

    assert response.status_code == 301
    assert response["Location"] == f"/g/{hex_digest}/"


def test_an_unknown_hash_is_a_plain_404(reader_client: Client) -> None:
    assert reader_client.get(f"/g/{'0' * 64}/").status_code == 404
    assert reader_client.get(f"/g/{'0' * 64}/download/").status_code == 404
    assert reader_client.get("/g/not-a-hash/").status_code == 404


def test_it_sends_an_anonymous_visitor_to_sign_in(client: Client, hex_digest: str) -> None:
    assert client.get(f"/g/{hex_digest}/").status_code == 302


def test_reached_without_a_document_it_links_the_versions_it_is(
    reader_client: Client, hex_digest: str
) -> None:
    page = reader_client.get(f"/g/{hex_digest}/").content.decode()

    assert f'href="/g/{hex_digest}/?document=gate-flow#compare"' in page
    assert "Gate &lt;flow&gt; — version 1" in page
