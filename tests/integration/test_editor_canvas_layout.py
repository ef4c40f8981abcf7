"""The editor's canvas keeps its shape: an edit that leaves the structure alone (names, labels,
prompts, schemas) draws the nodes where they were; a structural edit lays the graph out again."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.graph import parse_document, templates
from editor.graph.dot import structure_key
from editor.models import Draft
from editor.services import documents
from tests.integration.test_editor_page import HX, approval_text, node_form_data

pytestmark = pytest.mark.django_db

HASH = "sha256:" + "a" * 64
_NODE = re.compile(
    r'<g id="node&#45;(n\d+)" class="node[^"]*">.*?<text[^>]* x="([-\d.]+)" y="([-\d.]+)"',
    re.S,
)


@pytest.fixture(autouse=True)
def _flow(author: User) -> None:
    documents.create_document(author, title="Approval flow", slug="flow", text=approval_text())


def places(page: str) -> dict[str, tuple[float, float]]:
    """Where each node's first line of text is drawn, by DOT id, from the first node (``neato``
    may move the whole drawing to keep it in view; the page keeps its view on a node)."""
    found = [(name, float(x), float(y)) for name, x, y in _NODE.findall(page)]
    if not found:
        return {}
    _, x0, y0 = found[0]
    return {name: (round(x - x0, 2), round(y - y0, 2)) for name, x, y in found}


def test_a_longer_display_name_leaves_every_node_where_it_was(author_client: Client) -> None:
    before = places(author_client.get("/graphs/flow/").content.decode())
    assert len(before) == 5

    answer = author_client.post(
        "/graphs/flow/edit/node/",
        node_form_data("review", name="A much longer name for the review gate"),
        **HX,
    ).content.decode()

    assert "A much longer name for the review gate" in answer
    assert places(answer) == before


def test_a_new_edge_lays_the_graph_out_again(author_client: Client) -> None:
    author_client.get("/graphs/flow/")
    kept = Draft.objects.get().layout
    assert kept is not None and set(kept["nodes"]) == {"n1", "n2", "n3", "n4", "n5"}

    author_client.post(
        "/graphs/flow/edit/add-edge/", {"revision": "1", "from": "archive", "to": "write"}, **HX
    )

    assert Draft.objects.get().layout["structure"] != kept["structure"]


def test_the_structure_key_ignores_names_and_ids_but_not_edges() -> None:
    graph = templates.approval_gate(HASH)
    renamed = parse_document(
        approval_text().replace('"id": "write"', '"id": "author"').replace('"write"', '"author"')
    )
    value = templates.approval_gate(HASH)
    assert structure_key(renamed) == structure_key(graph)
    fewer = parse_document(approval_text().replace('"from": "write"', '"from": "review"', 1))
    assert structure_key(fewer) != structure_key(value)
