"""Documents managed through the API: rename (the old slug leads to the new one), duplicate,
archive and restore, delete (the draft and its history go; frozen versions stay)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from editor.models import Document, DraftRevision, FrozenGraph, Version
from tests.integration.api.callers import GRAPH, Caller, error_of

pytestmark = pytest.mark.django_db


def test_renaming_changes_title_and_slug_and_the_old_slug_redirects(
    api: Caller, new_document: Callable[..., dict[str, Any]]
) -> None:
    new_document("Flow", GRAPH)

    response = api.request("PATCH", "/v1/documents/flow", {"title": "Launch", "slug": "launch"})

    assert response.status_code == 200, response.content
    assert response.json()["slug"] == "launch"
    assert response.json()["title"] == "Launch"
    old = api.get("/v1/documents/flow/draft?x=1")
    assert old.status_code == 308
    assert old["Location"] == "/v1/documents/launch/draft?x=1"
    assert api.get("/v1/documents/launch/draft").json()["revision"] == 1


def test_a_slug_in_use_or_once_used_by_another_document_is_refused(
    api: Caller, new_document: Callable[..., dict[str, Any]]
) -> None:
    new_document("First", GRAPH)
    new_document("Second", GRAPH)
    api.request("PATCH", "/v1/documents/first", {"slug": "renamed"})

    taken = api.request("PATCH", "/v1/documents/second", {"slug": "renamed"})
    was_taken = api.request("PATCH", "/v1/documents/second", {"slug": "first"})
    created = api.post("/v1/documents", {"title": "First", "slug": "first"})

    assert taken.status_code == 409 and error_of(taken)["code"] == "slug_taken"
    assert was_taken.status_code == 409
    assert created.status_code == 409


def test_archived_documents_leave_the_list_until_restored(
    api: Caller, new_document: Callable[..., dict[str, Any]]
) -> None:
    new_document("Flow", GRAPH)

    archived = api.request("PATCH", "/v1/documents/flow", {"archived": True})

    assert archived.json()["archived"] is True
    assert api.get("/v1/documents").json()["documents"] == []
    listed = api.get("/v1/documents?archived=true").json()["documents"]
    assert [row["slug"] for row in listed] == ["flow"]
    restored = api.request("PATCH", "/v1/documents/flow", {"archived": False})
    assert "archived" not in restored.json()
    assert [row["slug"] for row in api.get("/v1/documents").json()["documents"]] == ["flow"]


def test_duplicating_copies_the_draft_under_a_new_slug(
    api: Caller, new_document: Callable[..., dict[str, Any]]
) -> None:
    new_document("Flow", GRAPH)

    response = api.post("/v1/documents/flow/duplicate", {})

    assert response.status_code == 201, response.content
    copy = response.json()
    assert (copy["slug"], copy["title"]) == ("copy-of-flow", "Copy of Flow")
    text = api.get("/v1/documents/copy-of-flow/draft").json()["text"]
    assert json.loads(text) == GRAPH
    [row] = api.get("/v1/documents/copy-of-flow/revisions").json()["revisions"]
    assert row["summary"] == "duplicated from `flow` (revision 1)"


def test_deleting_takes_the_draft_and_history_and_keeps_frozen_versions(
    api: Caller, new_document: Callable[..., dict[str, Any]]
) -> None:
    new_document("Flow", GRAPH)
    frozen = api.post("/v1/documents/flow/freeze", headers={"If-Match": '"1"'}).json()

    response = api.delete("/v1/documents/flow")

    assert response.status_code == 200
    assert response.json() == {"slug": "flow", "deleted": True, "revisions": 1, "versions_kept": 1}
    assert api.get("/v1/documents/flow").status_code == 404
    assert api.get("/v1/documents").json()["documents"] == []
    assert DraftRevision.objects.count() == 0
    assert Version.objects.count() == 1
    assert FrozenGraph.objects.filter(hash=frozen["graph"]).exists()
    assert api.get(f"/v1/graphs/{frozen['graph']}").status_code == 200
    # The slug is free again.
    assert api.post("/v1/documents", {"title": "Flow"}).json()["slug"] == "flow"


def test_a_document_never_frozen_is_removed_whole(
    api: Caller, new_document: Callable[..., dict[str, Any]]
) -> None:
    new_document("Scratch", GRAPH)

    assert api.delete("/v1/documents/scratch").status_code == 200

    assert not Document.objects.exists()


def test_only_authors_manage_documents(
    reader: Caller, new_document: Callable[..., dict[str, Any]]
) -> None:
    new_document("Flow", GRAPH)

    assert reader.request("PATCH", "/v1/documents/flow", {"title": "x"}).status_code == 403
    assert reader.post("/v1/documents/flow/duplicate", {}).status_code == 403
    assert reader.delete("/v1/documents/flow").status_code == 403
    assert Document.objects.get().title == "Flow"
