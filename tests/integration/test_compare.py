"""**Compare**: `/graphs/<slug>/compare/?from=…&to=…`."""

import json
from typing import Any

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


def gate() -> dict[str, Any]:
    return wire_value(approval_gate("sha256:" + "e" * 64))


@pytest.fixture
def first(author: User) -> str:
    documents.create_document(author, title="Flow", text=json.dumps(gate()))
    return documents.freeze(author, "flow", expected_revision=1).graph


def set_draft(author: User, value: Any) -> None:
    revision = documents.read_draft("flow").revision
    text = value if isinstance(value, str) else json.dumps(value)
    documents.save_draft(author, "flow", text=text, expected_revision=revision)


def test_equal_hashes_are_identical(reader_client: Client, first: str) -> None:
    response = reader_client.get("/graphs/flow/compare/", {"from": first, "to": "draft"})

    page = response.content.decode()
    assert response.status_code == 200
    assert "identical" in page
    assert_no_inline_script(page)


def test_it_lists_added_changed_and_removed_nodes_and_edges(
    reader_client: Client, author: User, first: str
) -> None:
    value = gate()
    value["nodes"] = [n for n in value["nodes"] if n["payload"]["id"] != "archive"]
    value["edges"] = [e for e in value["edges"] if e["to"] != "archive"]
    value["nodes"][0]["payload"]["name"] = "Writer <one>"
    value["nodes"].append({"kind": "tool", "payload": {"id": "notify", "tool": "echo"}})
    value["edges"].append({"from": "publish", "to": "notify"})
    set_draft(author, value)

    response = reader_client.get("/graphs/flow/compare/", {"from": first, "to": "draft"})

    page = response.content.decode()
    assert "+ <code>notify</code>" in page
    assert "− <code>archive</code>" in page
    assert "~ <code>write</code>" in page
    assert "<code>name</code>" in page
    assert "&quot;Writer &lt;one&gt;&quot;" in page
    assert "+ <code>publish → notify</code>" in page
    assert "− <code>decide → archive</code>" in page
    assert "(rejected)" in page
    assert "<svg" in page
    assert "#d5f5dc" in page.lower() or "d5f5dc" in page.lower()


def test_it_answers_htmx_with_the_result_alone(
    reader_client: Client, author: User, first: str
) -> None:
    response = reader_client.get(
        "/graphs/flow/compare/", {"from": first, "to": "draft"}, headers={"HX-Request": "true"}
    )

    assert "HX-Request" in response["Vary"]
    assert response.content.decode().lstrip().startswith('<div id="compare-result">')


def test_by_default_it_compares_the_latest_version_with_the_draft(
    reader_client: Client, first: str
) -> None:
    page = reader_client.get("/graphs/flow/compare/").content.decode()

    assert "identical" in page
    assert f'<option value="{first}" selected>' in page


def test_it_says_when_the_draft_does_not_parse(
    reader_client: Client, author: User, first: str
) -> None:
    set_draft(author, "{")

    response = reader_client.get("/graphs/flow/compare/", {"from": first, "to": "draft"})

    assert response.status_code == 200
    assert "The draft does not parse" in response.content.decode()


def test_it_says_when_a_side_is_unknown(reader_client: Client, first: str) -> None:
    response = reader_client.get("/graphs/flow/compare/", {"from": "sha256:" + "0" * 64})

    assert response.status_code == 200
    assert "not a stored graph" in response.content.decode()


def test_it_answers_404_for_an_unknown_document(reader_client: Client) -> None:
    assert reader_client.get("/graphs/nope/compare/").status_code == 404


def test_the_canvas_draws_removed_nodes_and_edges_as_ghosts_and_signs_every_change(
    reader_client: Client, author: User, first: str
) -> None:
    value = gate()
    value["nodes"] = [n for n in value["nodes"] if n["payload"]["id"] != "archive"]
    value["edges"] = [e for e in value["edges"] if e["to"] != "archive"]
    value["nodes"][0]["payload"]["name"] = "Writer"
    value["nodes"].append({"kind": "tool", "payload": {"id": "notify", "tool": "echo"}})
    value["edges"].append({"from": "publish", "to": "notify"})
    set_draft(author, value)

    page = reader_client.get("/graphs/flow/compare/", {"from": first, "to": "draft"})
    svg = page.content.decode()

    assert "− archive" in svg  # the removed node, still drawn, signed
    assert "+ notify" in svg
    assert "~ ⚠ ▶ Writer" in svg or "~ ▶ Writer" in svg
    assert "− rejected" in svg  # the removed edge keeps its label, signed
    assert 'stroke-dasharray="5,2"' in svg
    assert "+ added" in svg and "− removed" in svg
