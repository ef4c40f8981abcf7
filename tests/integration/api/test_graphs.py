"""``/v1/graphs``, ``/v1/graphs/validate``, the export and ``/v1/schema/graph.json``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from editor.graph import parse_document, validate_document, wire_value
from editor.models import FrozenGraph, ImmutableRecord
from editor.services.documents import graphs
from tests.integration.api.callers import DANGLING, GRAPH, Caller, error_of, graph_with

pytestmark = pytest.mark.django_db

#: The dangling edge exactly as the reference's API.md shows it.
REFERENCE_DANGLING_EDGE = {
    "code": "dangling_edge",
    "message": "edge `approve` -> `ghost` references unknown node id `ghost`",
    "edge": {"from": "approve", "to": "ghost"},
    "missing": "ghost",
    "suggestion": None,
}

MALFORMED_HASHES = [
    "sha256:zz",
    "sha256:" + "0" * 63,
    "sha256:" + "0" * 65,
    "sha256:" + "A" * 64,
    "sha1:" + "0" * 40,
    "0" * 64,
    "draft",
]


def post_graph(api: Caller, document: object = GRAPH) -> str:
    response = api.post("/v1/graphs", document)
    assert response.status_code == 201, response.content
    return response.json()["graph"]


def test_posting_a_valid_graph_stores_it_and_answers_its_hash(api: Caller) -> None:
    response = api.post("/v1/graphs", GRAPH)

    assert response.status_code == 201
    body = response.json()
    assert body == {"graph": body["graph"], "created": True}
    assert body["graph"] == validate_document(json.dumps(GRAPH))["graph"]
    assert FrozenGraph.objects.filter(hash=body["graph"]).exists()


def test_posting_the_same_graph_again_creates_nothing_and_keeps_the_first_copy(
    api: Caller, author: User
) -> None:
    first = post_graph(api)
    respelled = json.dumps(GRAPH, indent=4, sort_keys=True)

    response = api.post("/v1/graphs", respelled)

    assert response.status_code == 201
    assert response.json() == {"graph": first, "created": False}
    assert FrozenGraph.objects.count() == 1
    assert FrozenGraph.objects.get().created_by == author


def test_an_invalid_graph_is_refused_with_every_error_in_the_reference_shape(
    api: Caller,
) -> None:
    response = api.post("/v1/graphs", DANGLING)

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_graph"
    assert error["message"] == "the graph document has 1 validation error(s)"
    assert error["details"] == {"errors": [REFERENCE_DANGLING_EDGE]}
    assert not FrozenGraph.objects.exists()


def test_a_graph_that_does_not_parse_is_refused_as_not_well_formed(api: Caller) -> None:
    response = api.post("/v1/graphs", b'{"schema_version": 1, "nodes": [')

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_graph"
    assert error["message"] == "the graph document is not well formed"
    [problem] = error["details"]["errors"]
    assert problem["code"] == "malformed_document"


def test_a_graph_with_unknown_keys_is_refused_as_the_strict_parser_does(api: Caller) -> None:
    response = api.post("/v1/graphs", {**GRAPH, "extra": True})

    assert response.status_code == 400
    assert error_of(response)["message"] == "the graph document is not well formed"


def test_the_body_is_read_whatever_its_content_type_says(api: Caller) -> None:
    response = api.post("/v1/graphs", GRAPH, content_type="text/plain")

    assert response.status_code == 201


def test_validate_answers_a_valid_graph_with_its_would_be_hash_and_summary(api: Caller) -> None:
    response = api.post("/v1/graphs/validate", GRAPH)

    assert response.status_code == 200
    assert response.json() == {
        "valid": True,
        "graph": validate_document(json.dumps(GRAPH))["graph"],
        "summary": {
            "node_count": 2,
            "edge_count": 1,
            "entry_nodes": ["research"],
            "terminal_nodes": ["approve"],
        },
    }
    assert not FrozenGraph.objects.exists()


def test_validate_answers_200_with_the_errors_for_an_invalid_graph(api: Caller) -> None:
    response = api.post("/v1/graphs/validate", DANGLING)

    assert response.status_code == 200
    assert response.json() == {"valid": False, "errors": [REFERENCE_DANGLING_EDGE]}


@pytest.mark.parametrize(
    "body",
    [b"", b"not json", b"[]", b'"text"', b"\xff\xfe", b"{" * 5000, b'{"a": 1, "a": 2}'],
    ids=["empty", "not-json", "array", "string", "not-utf8", "deep", "duplicate-key"],
)
def test_validate_answers_200_for_any_body_within_the_cap(api: Caller, body: bytes) -> None:
    response = api.post("/v1/graphs/validate", body)

    assert response.status_code == 200
    assert response.json() == validate_document(body)
    assert response.json()["valid"] is False


def test_validate_is_open_to_any_signed_in_user(reader: Caller) -> None:
    assert reader.post("/v1/graphs/validate", GRAPH).status_code == 200


def test_the_list_is_sorted_by_hash_in_the_reference_shape(api: Caller) -> None:
    hashes = [post_graph(api, graph_with(*ids)) for ids in (["a"], ["b", "c"], ["d"])]

    response = api.get("/v1/graphs")

    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"graphs"}
    assert [item["graph"] for item in body["graphs"]] == sorted(hashes)
    chain = next(item for item in body["graphs"] if item["node_count"] == 2)
    assert chain == {
        "graph": chain["graph"],
        "node_count": 2,
        "edge_count": 1,
        "entry_nodes": ["b"],
        "terminal_nodes": ["c"],
    }


def test_the_list_pages_when_asked_and_the_cursor_leads_to_the_rest(api: Caller) -> None:
    hashes = sorted(post_graph(api, graph_with(f"n{index}")) for index in range(5))

    seen: list[str] = []
    path = "/v1/graphs?limit=2"
    pages = 0
    while path:
        body = api.get(path).json()
        assert set(body) == {"graphs", "next"}
        assert len(body["graphs"]) <= 2
        seen += [item["graph"] for item in body["graphs"]]
        pages += 1
        path = body["next"] and f"/v1/graphs?limit=2&cursor={body['next']}"

    assert seen == hashes
    assert pages == 3


@pytest.mark.parametrize("query", ["limit=0", "limit=201", "limit=ten", "cursor=not-a-cursor"])
def test_a_bad_paging_parameter_is_a_bad_request(api: Caller, query: str) -> None:
    response = api.get(f"/v1/graphs?{query}")

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"


def test_a_stored_graph_is_answered_in_its_wire_form(api: Caller) -> None:
    digest = post_graph(api)

    response = api.get(f"/v1/graphs/{digest}")

    assert response.status_code == 200
    assert response.json() == {
        "graph": digest,
        "document": wire_value(parse_document(json.dumps(GRAPH))),
    }


def test_an_unknown_graph_is_404_unknown_graph(api: Caller) -> None:
    response = api.get("/v1/graphs/sha256:" + "0" * 64)

    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown_graph"


@pytest.mark.parametrize("digest", MALFORMED_HASHES)
@pytest.mark.parametrize("suffix", ["", "/export"])
def test_a_malformed_hash_is_404_unknown_graph(api: Caller, digest: str, suffix: str) -> None:
    response = api.get(f"/v1/graphs/{digest}{suffix}")

    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown_graph"


def test_the_export_is_the_canonical_bytes_whose_sha256_is_the_hash(api: Caller) -> None:
    digest = post_graph(api)

    response = api.get(f"/v1/graphs/{digest}/export")

    assert response.status_code == 200
    assert "sha256:" + hashlib.sha256(response.content).hexdigest() == digest
    assert response["Content-Type"] == "application/json"
    hex_digits = digest.removeprefix("sha256:")
    assert response["Content-Disposition"] == f'attachment; filename="{hex_digits[:12]}.json"'
    assert response["ETag"] == f'"{digest}"'
    assert response["Cache-Control"] == "public, max-age=31536000, immutable"
    assert not response.content.endswith(b"\n")


def test_the_schema_is_the_generated_json_schema(api: Caller) -> None:
    golden = Path(settings.BASE_DIR, "docs", "schemas", "graph.schema.json")

    response = api.get("/v1/schema/graph.json")

    assert response.status_code == 200
    assert response.json() == json.loads(golden.read_text(encoding="utf-8"))


def test_a_frozen_graph_refuses_to_be_updated_or_deleted(api: Caller) -> None:
    stored = FrozenGraph.objects.get(hash=post_graph(api))

    stored.summary = {}
    with pytest.raises(ImmutableRecord):
        stored.save()
    with pytest.raises(ImmutableRecord):
        stored.delete()
    with pytest.raises(ImmutableRecord):
        FrozenGraph.objects.update(summary={})
    with pytest.raises(ImmutableRecord):
        FrozenGraph.objects.all().delete()
    assert FrozenGraph.objects.get().summary["node_count"] == 2


def wide_graph(prefix: str, nodes: int = 1500) -> dict[str, Any]:
    """Nodes without edges: each is an entry and a terminal node, so its summary is large."""
    return {
        "schema_version": 1,
        "nodes": [
            {
                "kind": "tool",
                "payload": {"id": f"{prefix}-{index:04d}-" + "x" * 180, "tool": "echo"},
            }
            for index in range(nodes)
        ],
        "edges": [],
    }


def test_a_page_of_large_graphs_stops_at_the_byte_budget_and_the_cursor_leads_on(
    api: Caller,
) -> None:
    hashes = sorted(post_graph(api, wide_graph(f"g{index}")) for index in range(4))

    seen: list[str] = []
    path = f"/v1/graphs?limit={len(hashes)}"
    while path:
        response = api.get(path)
        assert response.status_code == 200
        assert len(response.content) <= 2 * graphs.PAGE_MAX_BYTES  # one graph may pass it
        body = response.json()
        assert body["graphs"], "every page holds at least one graph"
        assert len(body["graphs"]) < len(hashes)
        seen += [item["graph"] for item in body["graphs"]]
        path = body["next"] and f"/v1/graphs?limit={len(hashes)}&cursor={body['next']}"

    assert seen == hashes
