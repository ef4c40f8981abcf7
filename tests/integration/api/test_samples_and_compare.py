"""``GET/PUT /v1/documents/{slug}/samples`` (named sample inputs, checked against the draft's
entry schema, the last used remembered per person) and ``GET /v1/runs/{a}/compare/{b}`` (two
runs of one document side by side, node by node)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.integration.api.callers import Caller, bearer_caller, error_of, make_user
from tests.integration.api.running import drive

pytestmark = pytest.mark.django_db

#: take (echo; takes {"amount": integer}) → reply (echo).
REFUND = {
    "schema_version": 1,
    "nodes": [
        {
            "kind": "tool",
            "payload": {
                "id": "take",
                "tool": "echo",
                "input_schema": {
                    "type": "object",
                    "properties": {"amount": {"type": "integer"}},
                    "required": ["amount"],
                },
            },
        },
        {"kind": "tool", "payload": {"id": "reply", "tool": "echo"}},
    ],
    "edges": [{"from": "take", "to": "reply"}],
}

SAMPLES = [
    {"name": "small refund", "input": {"amount": 5}},
    {"name": "large refund", "input": {"amount": 5000}},
]


def document(api: Caller, slug: str = "refunds", graph: Any = REFUND) -> str:
    body = {"slug": slug, "title": slug, "text": json.dumps(graph)}
    assert api.post("/v1/documents", body).status_code == 201
    return slug


def test_samples_are_kept_in_order_and_the_last_used_is_remembered_per_person(
    api: Caller, author: User
) -> None:
    slug = document(api)
    assert api.get(f"/v1/documents/{slug}/samples").json() == {"samples": [], "last": None}

    saved = api.put(f"/v1/documents/{slug}/samples", {"samples": SAMPLES})

    assert saved.status_code == 200, saved.content
    assert saved.json() == {"samples": SAMPLES, "last": None}
    started = api.post(
        f"/v1/documents/{slug}/test-runs", {"input": {"amount": 5000}, "sample": "large refund"}
    )
    assert started.status_code == 201, started.content
    assert api.get(f"/v1/documents/{slug}/samples").json()["last"] == "large refund"
    # Someone else has not tested with any.
    other = bearer_caller(make_user("bea", "authors"))
    assert other.get(f"/v1/documents/{slug}/samples").json()["last"] is None


def test_a_sample_that_breaks_the_entry_schema_is_400_naming_it_and_nothing_changes(
    api: Caller,
) -> None:
    slug = document(api)
    api.put(f"/v1/documents/{slug}/samples", {"samples": SAMPLES[:1]})

    response = api.put(
        f"/v1/documents/{slug}/samples",
        {"samples": [*SAMPLES, {"name": "broken", "input": {"amount": "lots"}}]},
    )

    assert response.status_code == 400
    error = error_of(response)
    assert "broken" in error["message"]
    assert "take" in error["message"]
    assert error["details"] == {"field": "samples[2]"}
    assert api.get(f"/v1/documents/{slug}/samples").json()["samples"] == SAMPLES[:1]


def test_two_samples_of_one_name_or_a_blank_name_are_refused(api: Caller) -> None:
    slug = document(api)
    twice = [SAMPLES[0], SAMPLES[0]]
    assert (
        "two samples"
        in error_of(api.put(f"/v1/documents/{slug}/samples", {"samples": twice}))["message"]
    )
    blank = [{"name": "  ", "input": {"amount": 1}}]
    assert error_of(api.put(f"/v1/documents/{slug}/samples", {"samples": blank}))["details"] == {
        "field": "samples[0]"
    }


def test_only_authors_change_samples(api: Caller, reader: Caller) -> None:
    slug = document(api)
    assert reader.put(f"/v1/documents/{slug}/samples", {"samples": SAMPLES}).status_code == 403


def test_two_runs_of_a_document_compare_node_by_node(api: Caller) -> None:
    slug = document(api)
    first = api.post(f"/v1/documents/{slug}/test-runs", {"input": {"amount": 5}}).json()["run"]
    second = api.post(f"/v1/documents/{slug}/test-runs", {"input": {"amount": 7}}).json()["run"]
    assert drive(first) == drive(second) == "completed"

    response = api.get(f"/v1/runs/{first}/compare/{second}")

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["a"]["run"], body["b"]["run"]) == (first, second)
    assert [node["node"] for node in body["nodes"]] == ["take", "reply"]
    take = body["nodes"][0]
    assert take["a"]["state"] == take["b"]["state"] == "exited"
    assert take["a"]["input"] == {"amount": 5}
    assert take["b"]["output"] == {"amount": 7}
    assert take["same"] is False
    assert take["input_diff"] == [{"path": "$.amount", "change": "changed", "a": 5, "b": 7}]
    assert take["output_diff"] == take["input_diff"]
    assert isinstance(take["a"]["duration_ms"], int)
    assert take["a"]["input_tokens"] == 0
    assert api.get(f"/v1/runs/{first}/compare/{first}").json()["nodes"][1]["same"] is True


def test_a_pinned_node_compares_as_pinned(api: Caller) -> None:
    slug = document(api)
    first = api.post(f"/v1/documents/{slug}/test-runs", {"input": {"amount": 5}}).json()["run"]
    drive(first)
    api.put(f"/v1/documents/{slug}/pins/take", {"output": {"amount": 1}})
    second = api.post(f"/v1/documents/{slug}/test-runs", {"input": {"amount": 5}}).json()["run"]
    drive(second)

    take = api.get(f"/v1/runs/{first}/compare/{second}").json()["nodes"][0]

    assert (take["a"]["state"], take["b"]["state"]) == ("exited", "pinned")
    assert take["output_diff"] == [{"path": "$.amount", "change": "changed", "a": 5, "b": 1}]


def test_runs_of_two_documents_do_not_compare(api: Caller) -> None:
    one = document(api, "one")
    two = document(api, "two")
    a = api.post(f"/v1/documents/{one}/test-runs", {"input": {"amount": 1}}).json()["run"]
    b = api.post(f"/v1/documents/{two}/test-runs", {"input": {"amount": 1}}).json()["run"]

    response = api.get(f"/v1/runs/{a}/compare/{b}")

    assert response.status_code == 400
    assert error_of(response)["code"] == "not_comparable"
    assert error_of(api.get(f"/v1/runs/{a}/compare/nope"))["code"] == "unknown_run"
