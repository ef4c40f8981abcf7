"""Bodies edit like the top level: a node inside a map or fold body has its own form, and
nodes and edges are added and deleted inside a body with the same forms."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.graph import templates, wire_value
from editor.graph.edits import format_draft
from editor.models import Draft
from editor.services import documents

pytestmark = pytest.mark.django_db

HASH = "sha256:" + "a" * 64
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def _panel(author: User) -> None:
    text = format_draft(wire_value(templates.rounds(HASH, HASH, ["a", "b"], 2)))
    documents.create_document(author, title="Panel", slug="panel", text=text)


def body() -> dict[str, Any]:
    value = json.loads(Draft.objects.get().text)
    [owner] = [n for n in value["nodes"] if n["payload"].get("body", {}).get("kind") == "subgraph"]
    return owner["payload"]["body"]["value"]


def revision() -> str:
    return str(Draft.objects.get().revision)


def test_a_body_node_on_the_canvas_links_to_its_own_form(author_client: Client) -> None:
    page = author_client.get("/graphs/panel/").content.decode()

    assert 'href="/graphs/panel/?node=critic&in=panel"' in page
    form = author_client.get("/graphs/panel/?node=critic&in=panel", **HX).content.decode()
    assert '<span class="kind-tag">agent</span>' in form
    assert '<input type="hidden" name="in" value="panel">' in form
    # The structure panel follows: the nodes and edges of the body.
    assert "Nodes in the body of <code>panel</code>" in form
    assert "prompts" in form and "collect" in form


def test_a_body_node_is_edited_in_place(author_client: Client) -> None:
    author_client.post(
        "/graphs/panel/edit/node/",
        {
            "revision": revision(),
            "in": "panel",
            "node": "critic",
            "id": "critic",
            "agent_hash": HASH,
            "name": "The critic",
        },
        **HX,
    )

    [critic] = [n for n in body()["nodes"] if n["payload"]["id"] == "critic"]
    assert critic["payload"]["name"] == "The critic"


def test_nodes_and_edges_are_added_and_deleted_inside_a_body(author_client: Client) -> None:
    author_client.post(
        "/graphs/panel/edit/add-node/",
        {"revision": revision(), "in": "panel", "kind": "tool", "id": "tidy"},
        **HX,
    )
    author_client.post(
        "/graphs/panel/edit/add-edge/",
        {"revision": revision(), "in": "panel", "from": "collect", "to": "tidy"},
        **HX,
    )

    assert "tidy" in [n["payload"]["id"] for n in body()["nodes"]]
    assert body()["edges"][-1] == {"from": "collect", "to": "tidy"}
    value = json.loads(Draft.objects.get().text)
    assert "tidy" not in [n["payload"]["id"] for n in value["nodes"]]

    index = len(body()["edges"]) - 1
    author_client.post(
        "/graphs/panel/edit/delete-edge/",
        {"revision": revision(), "in": "panel", "edge": str(index)},
        **HX,
    )
    author_client.post(
        "/graphs/panel/edit/delete-node/",
        {"revision": revision(), "in": "panel", "node": "tidy"},
        **HX,
    )
    assert "tidy" not in [n["payload"]["id"] for n in body()["nodes"]]
    assert {"from": "collect", "to": "tidy"} not in body()["edges"]


def test_the_palette_adds_a_node_next_to_the_chosen_one_already_connected(
    author_client: Client,
) -> None:
    author_client.post(
        "/graphs/panel/edit/add-after/",
        {"revision": revision(), "in": "panel", "kind": "tool", "after": "collect"},
        **HX,
    )

    assert "tool" in [n["payload"]["id"] for n in body()["nodes"]]
    assert body()["edges"][-1] == {"from": "collect", "to": "tool"}
