"""``/v1/documents/{slug}/revisions``: the draft's saved history, and restoring one revision."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.integration.api.callers import GRAPH, Caller, error_of, graph_with

pytestmark = pytest.mark.django_db


def put(api: Caller, slug: str, value: Any, revision: int) -> Any:
    response = api.put(
        f"/v1/documents/{slug}/draft",
        {"text": json.dumps(value)},
        headers={"If-Match": f'"{revision}"'},
    )
    assert response.status_code == 200, response.content
    return response


def test_every_save_is_listed_newest_first_with_who_when_and_what_changed(
    api: Caller, new_document: Callable[..., dict[str, Any]]
) -> None:
    slug = new_document("Flow", GRAPH)["slug"]
    put(api, slug, graph_with("research", "review"), 1)

    response = api.get(f"/v1/documents/{slug}/revisions")

    assert response.status_code == 200
    body = response.json()
    assert [row["revision"] for row in body["revisions"]] == [2, 1]
    newest = body["revisions"][0]
    assert newest["summary"] == "renamed `approve` → `review`"
    assert newest["by"] == "ada"
    assert newest["valid"] is True
    assert newest["error_count"] == 0
    assert newest["kind"] == "edit"
    assert body["revisions"][1]["summary"] == "created the graph"
    assert body["next"] is None


def test_restoring_a_revision_is_itself_a_new_revision(
    api: Caller, new_document: Callable[..., dict[str, Any]]
) -> None:
    slug = new_document("Flow", GRAPH)["slug"]
    put(api, slug, graph_with("research", "review"), 1)

    response = api.post(f"/v1/documents/{slug}/revisions/1/restore", headers={"If-Match": '"2"'})

    assert response.status_code == 200, response.content
    assert response["ETag"] == '"3"'
    assert response.json()["revision"] == 3
    assert json.loads(response.json()["text"]) == GRAPH
    listed = api.get(f"/v1/documents/{slug}/revisions").json()["revisions"]
    assert [(row["revision"], row["summary"]) for row in listed][:2] == [
        (3, "restored revision 1"),
        (2, "renamed `approve` → `review`"),
    ]


def test_restoring_needs_the_current_revision_and_a_kept_one(
    api: Caller, new_document: Callable[..., dict[str, Any]]
) -> None:
    slug = new_document("Flow", GRAPH)["slug"]
    put(api, slug, graph_with("a", "b"), 1)

    missing = api.post(f"/v1/documents/{slug}/revisions/1/restore")
    stale = api.post(f"/v1/documents/{slug}/revisions/1/restore", headers={"If-Match": '"1"'})
    unknown = api.post(f"/v1/documents/{slug}/revisions/9/restore", headers={"If-Match": '"2"'})

    assert missing.status_code == 428
    assert stale.status_code == 412
    assert error_of(stale)["details"]["revision"] == 2
    assert unknown.status_code == 400
    assert "no revision 9" in error_of(unknown)["message"]
    assert api.get(f"/v1/documents/{slug}/draft").json()["revision"] == 2


def test_readers_see_the_history_but_cannot_restore(
    reader: Caller, new_document: Callable[..., dict[str, Any]]
) -> None:
    slug = new_document("Flow", GRAPH)["slug"]

    assert reader.get(f"/v1/documents/{slug}/revisions").status_code == 200
    refused = reader.post(f"/v1/documents/{slug}/revisions/1/restore", headers={"If-Match": '"1"'})
    assert refused.status_code == 403


def test_the_history_is_bounded_by_the_setting(
    api: Caller, new_document: Callable[..., dict[str, Any]], settings: Any
) -> None:
    settings.GATEHOUSE_DRAFT_HISTORY = 3
    slug = new_document("Flow", GRAPH)["slug"]
    for revision in range(1, 6):
        put(api, slug, graph_with("a", f"b{revision}"), revision)

    listed = api.get(f"/v1/documents/{slug}/revisions").json()["revisions"]

    assert [row["revision"] for row in listed] == [6, 5, 4]


def test_a_held_field_blocks_freezing_through_the_api_and_is_named(
    api: Caller, new_document: Callable[..., dict[str, Any]]
) -> None:
    from editor.models import Draft

    slug = new_document("Flow", GRAPH)["slug"]
    Draft.objects.filter(document__slug=slug).update(
        held=[
            {
                "level": [],
                "node": "approve",
                "field": "output_schema",
                "text": "{",
                "message": "is not valid JSON",
            }
        ]
    )

    draft = api.get(f"/v1/documents/{slug}/draft").json()
    refused = api.post(f"/v1/documents/{slug}/freeze", headers={"If-Match": '"1"'})

    assert draft["held"][0]["field"] == "output_schema"
    assert refused.status_code == 400
    error = error_of(refused)
    assert error["code"] == "invalid_graph"
    [held] = error["details"]["errors"]
    assert held["code"] == "unsaved_field"
    assert held["node"] == "approve"
    assert "`output_schema` was not saved" in held["message"]
