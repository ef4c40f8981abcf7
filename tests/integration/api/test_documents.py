"""``/v1/documents``: documents, drafts with optimistic concurrency, freezing, versions, diffs."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from editor.graph import graph_hash, parse_document, validate_document
from editor.models import Document, Draft, FrozenGraph, ImmutableRecord, Version
from tests.integration.api.callers import DANGLING, GRAPH, Caller, error_of, graph_with

pytestmark = pytest.mark.django_db

NewDocument = Callable[..., dict[str, Any]]


def hash_of(document: dict[str, Any]) -> str:
    return graph_hash(parse_document(json.dumps(document)))


def put_draft(api: Caller, slug: str, text: Any, revision: int | str | None) -> Any:
    headers = {} if revision is None else {"If-Match": f'"{revision}"'}
    if not isinstance(text, str):
        text = json.dumps(text)
    return api.put(f"/v1/documents/{slug}/draft", {"text": text}, headers=headers)


def freeze(api: Caller, slug: str, revision: int | None, note: str | None = None) -> Any:
    headers = {} if revision is None else {"If-Match": f'"{revision}"'}
    body = b"" if note is None else {"note": note}
    return api.post(f"/v1/documents/{slug}/freeze", body, headers=headers)


# --- Creating and listing -----------------------------------------------------------------


def test_creating_a_document_answers_201_with_its_object(api: Caller) -> None:
    response = api.post("/v1/documents", {"title": "Approval flow", "text": json.dumps(GRAPH)})

    assert response.status_code == 201
    body = response.json()
    assert body == {
        "slug": "approval-flow",
        "title": "Approval flow",
        "draft": {"revision": 1, "valid": True, "error_count": 0},
        "updated_at": body["updated_at"],
    }
    assert Draft.objects.get(document__slug="approval-flow").text == json.dumps(GRAPH)


def test_a_draft_may_hold_anything_even_invalid_json(api: Caller) -> None:
    response = api.post("/v1/documents", {"title": "Scratch", "text": "{ not json"})

    assert response.status_code == 201
    assert response.json()["draft"] == {"revision": 1, "valid": False, "error_count": 1}


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Ünïcödé Graph!", "unicode-graph"),
        ("snake_case  and   spaces", "snake-case-and-spaces"),
        ("日本語", "graph"),
        ("---", "graph"),
        ("a" * 63 + " b", "a" * 63),
        ("x" * 100, "x" * 64),
    ],
)
def test_the_slug_is_derived_from_the_title_when_absent(api: Caller, title: str, slug: str) -> None:
    response = api.post("/v1/documents", {"title": title})

    assert response.status_code == 201
    assert response.json()["slug"] == slug


def test_a_given_slug_is_kept(api: Caller) -> None:
    response = api.post("/v1/documents", {"title": "Anything", "slug": "my-flow-2"})

    assert response.json()["slug"] == "my-flow-2"


@pytest.mark.parametrize("slug", ["", "Upper", "under_score", "a" * 65, "spa ce", "é"])
def test_a_malformed_slug_is_a_bad_request(api: Caller, slug: str) -> None:
    response = api.post("/v1/documents", {"title": "Anything", "slug": slug})

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "bad_request"
    assert error["details"]["errors"][0]["loc"] == ["body", "slug"]


@pytest.mark.parametrize(
    "body", [{}, {"title": ""}, {"title": "   "}, {"title": "x" * 201}, {"title": 5}]
)
def test_a_missing_or_bad_title_is_a_bad_request(api: Caller, body: dict[str, Any]) -> None:
    response = api.post("/v1/documents", body)

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"


def test_a_taken_slug_is_409_slug_taken(api: Caller, new_document: NewDocument) -> None:
    new_document("Approval flow")

    derived = api.post("/v1/documents", {"title": "Approval  flow"})
    given = api.post("/v1/documents", {"title": "Other", "slug": "approval-flow"})

    for response in (derived, given):
        assert response.status_code == 409
        error = error_of(response)
        assert error["code"] == "slug_taken"
        assert error["details"] == {"slug": "approval-flow"}
    assert Document.objects.count() == 1


def test_the_list_shows_each_document_with_its_draft_state_and_latest_version(
    api: Caller, new_document: NewDocument
) -> None:
    new_document("Empty")
    frozen = new_document("Frozen", GRAPH)
    assert freeze(api, frozen["slug"], 1).status_code == 201

    response = api.get("/v1/documents")

    assert response.status_code == 200
    body = response.json()
    assert body["next"] is None
    by_slug = {item["slug"]: item for item in body["documents"]}
    assert "latest" not in by_slug["empty"]
    assert by_slug["frozen"]["latest"] == {"version": 1, "graph": hash_of(GRAPH)}
    assert by_slug["frozen"]["draft"] == {"revision": 1, "valid": True, "error_count": 0}
    assert [item["slug"] for item in body["documents"]] == ["frozen", "empty"]


def test_the_list_pages_with_a_cursor(api: Caller, new_document: NewDocument) -> None:
    for index in range(5):
        new_document(f"Document {index}")

    seen: list[str] = []
    path = "/v1/documents?limit=2"
    while path:
        body = api.get(path).json()
        seen += [item["slug"] for item in body["documents"]]
        path = body["next"] and f"/v1/documents?limit=2&cursor={body['next']}"

    assert sorted(seen) == [f"document-{index}" for index in range(5)]
    assert len(seen) == 5


def test_a_document_is_answered_with_its_versions(
    api: Caller, author: User, new_document: NewDocument
) -> None:
    slug = new_document("Flow", GRAPH)["slug"]
    freeze(api, slug, 1, note="first")

    response = api.get(f"/v1/documents/{slug}")

    assert response.status_code == 200
    body = response.json()
    assert body["slug"] == slug
    assert body["latest"] == {"version": 1, "graph": hash_of(GRAPH)}
    [version] = body["versions"]
    assert version == {
        "version": 1,
        "graph": hash_of(GRAPH),
        "frozen_by": author.username,
        "frozen_at": version["frozen_at"],
        "note": "first",
    }


@pytest.mark.parametrize(
    "path", ["", "/draft", "/versions", "/diff?from=draft&to=draft", "/freeze", "/draft#put"]
)
def test_an_unknown_document_is_404_unknown_document(api: Caller, path: str) -> None:
    url = f"/v1/documents/nope{path.split('#')[0]}"
    if path == "/freeze":
        response = api.post(url, headers={"If-Match": '"1"'})
    elif path.endswith("#put"):
        response = api.put(url, {"text": ""}, headers={"If-Match": '"1"'})
    else:
        response = api.get(url)

    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown_document"


@pytest.mark.parametrize("slug", ["%00", "UPPER", "a" * 65, "%C3%A9", "under_score"])
def test_a_path_that_cannot_be_a_slug_is_404_unknown_document(api: Caller, slug: str) -> None:
    read = api.get(f"/v1/documents/{slug}/draft")
    frozen = api.post(f"/v1/documents/{slug}/freeze", headers={"If-Match": '"1"'})

    for response in (read, frozen):
        assert response.status_code == 404
        assert error_of(response)["code"] == "unknown_document"


# --- The draft ----------------------------------------------------------------------------


def test_the_draft_is_answered_with_its_revision_as_etag_and_its_validation(
    api: Caller, new_document: NewDocument
) -> None:
    slug = new_document("Flow", DANGLING)["slug"]

    response = api.get(f"/v1/documents/{slug}/draft")

    assert response.status_code == 200
    assert response["ETag"] == '"1"'
    assert response.json() == {
        "text": json.dumps(DANGLING),
        "revision": 1,
        "validation": validate_document(json.dumps(DANGLING)),
    }


def test_saving_the_draft_with_the_revision_read_replaces_it(
    api: Caller, new_document: NewDocument
) -> None:
    slug = new_document("Flow")["slug"]

    response = put_draft(api, slug, GRAPH, 1)

    assert response.status_code == 200
    assert response["ETag"] == '"2"'
    assert response.json() == {
        "text": json.dumps(GRAPH),
        "revision": 2,
        "validation": validate_document(json.dumps(GRAPH)),
    }
    assert api.get(f"/v1/documents/{slug}/draft").json()["revision"] == 2


def test_a_weak_or_bare_revision_is_accepted(api: Caller, new_document: NewDocument) -> None:
    slug = new_document("Flow")["slug"]

    weak = api.put(f"/v1/documents/{slug}/draft", {"text": "a"}, headers={"If-Match": 'W/"1"'})
    bare = api.put(f"/v1/documents/{slug}/draft", {"text": "b"}, headers={"If-Match": "2"})

    assert (weak.status_code, bare.status_code) == (200, 200)


def test_saving_without_if_match_is_428_precondition_required(
    api: Caller, new_document: NewDocument
) -> None:
    slug = new_document("Flow", "keep me")["slug"]

    response = put_draft(api, slug, "lost?", None)

    assert response.status_code == 428
    assert error_of(response)["code"] == "precondition_required"
    assert Draft.objects.get(document__slug=slug).text == "keep me"


@pytest.mark.parametrize("header", ["*", '"one"', "", '"1", "2"', '"-1"'])
def test_an_unreadable_if_match_is_a_bad_request(
    api: Caller, new_document: NewDocument, header: str
) -> None:
    slug = new_document("Flow", "keep me")["slug"]

    response = api.put(f"/v1/documents/{slug}/draft", {"text": "x"}, headers={"If-Match": header})

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"
    assert Draft.objects.get(document__slug=slug).text == "keep me"


def test_of_two_writers_of_one_revision_the_second_gets_412_and_nothing_is_lost(
    api: Caller, new_document: NewDocument
) -> None:
    slug = new_document("Flow", "base")["slug"]
    revision = api.get(f"/v1/documents/{slug}/draft").json()["revision"]

    first = put_draft(api, slug, "first writer", revision)
    second = put_draft(api, slug, "second writer", revision)

    assert first.status_code == 200
    assert second.status_code == 412
    error = error_of(second)
    assert error["code"] == "stale_draft"
    assert error["details"] == {"revision": 2}
    draft = api.get(f"/v1/documents/{slug}/draft").json()
    assert (draft["text"], draft["revision"]) == ("first writer", 2)

    # The second writer rebases on what it was told and saves.
    retry = put_draft(api, slug, "second writer", error["details"]["revision"])
    assert retry.status_code == 200
    assert retry.json()["revision"] == 3


@pytest.mark.parametrize(
    "body",
    [{}, {"text": 5}, {"text": None}, {"txt": "x"}, [], "text", b"not json", b""],
    ids=["empty", "number", "null", "wrong-key", "array", "string", "not-json", "no-body"],
)
def test_a_draft_body_of_the_wrong_shape_is_a_bad_request(
    api: Caller, new_document: NewDocument, body: Any
) -> None:
    slug = new_document("Flow", "keep me")["slug"]

    response = api.put(f"/v1/documents/{slug}/draft", body, headers={"If-Match": '"1"'})

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"
    assert Draft.objects.get(document__slug=slug).text == "keep me"


# --- Freezing -----------------------------------------------------------------------------


def test_freezing_a_valid_draft_creates_version_1(api: Caller, new_document: NewDocument) -> None:
    slug = new_document("Flow", GRAPH)["slug"]

    response = freeze(api, slug, 1, note="ship it")

    assert response.status_code == 201
    assert response.json() == {"graph": hash_of(GRAPH), "version": 1, "created": True}
    version = Version.objects.get()
    assert (version.number, version.note, version.graph_id) == (1, "ship it", hash_of(GRAPH))
    assert Draft.objects.get(document__slug=slug).text == json.dumps(GRAPH)


def test_refreezing_an_unchanged_draft_creates_no_version(
    api: Caller, new_document: NewDocument
) -> None:
    slug = new_document("Flow", GRAPH)["slug"]
    freeze(api, slug, 1)

    response = freeze(api, slug, 1)

    assert response.status_code == 200
    assert response.json() == {"graph": hash_of(GRAPH), "version": 1, "created": False}
    assert Version.objects.count() == 1


def test_freezing_a_graph_stored_already_adds_a_version_but_not_the_graph(
    api: Caller, new_document: NewDocument
) -> None:
    assert api.post("/v1/graphs", GRAPH).json()["created"] is True
    slug = new_document("Flow", GRAPH)["slug"]

    response = freeze(api, slug, 1)

    assert response.status_code == 201
    assert response.json() == {"graph": hash_of(GRAPH), "version": 1, "created": False}
    assert FrozenGraph.objects.count() == 1


def test_versions_count_up_and_returning_to_an_older_graph_is_a_new_version(
    api: Caller, new_document: NewDocument
) -> None:
    slug = new_document("Flow", GRAPH)["slug"]
    other = graph_with("x", "y")

    assert freeze(api, slug, 1).json()["version"] == 1
    put_draft(api, slug, other, 1)
    assert freeze(api, slug, 2).json() == {"graph": hash_of(other), "version": 2, "created": True}
    put_draft(api, slug, GRAPH, 2)
    third = freeze(api, slug, 3)

    assert third.status_code == 201
    assert third.json() == {"graph": hash_of(GRAPH), "version": 3, "created": False}
    versions = api.get(f"/v1/documents/{slug}/versions").json()
    assert [item["version"] for item in versions["versions"]] == [3, 2, 1]
    assert versions["next"] is None


def test_freezing_an_invalid_draft_is_400_invalid_graph(
    api: Caller, new_document: NewDocument
) -> None:
    slug = new_document("Flow", DANGLING)["slug"]

    response = freeze(api, slug, 1)

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_graph"
    assert error["message"] == "the graph document has 1 validation error(s)"
    assert error["details"]["errors"][0]["code"] == "dangling_edge"
    assert not Version.objects.exists()


def test_freezing_a_draft_that_does_not_parse_is_400_not_well_formed(
    api: Caller, new_document: NewDocument
) -> None:
    slug = new_document("Flow", "{ nope")["slug"]

    response = freeze(api, slug, 1)

    assert response.status_code == 400
    assert error_of(response)["message"] == "the graph document is not well formed"


def test_freezing_needs_if_match_and_refuses_a_stale_revision(
    api: Caller, new_document: NewDocument
) -> None:
    slug = new_document("Flow", GRAPH)["slug"]
    put_draft(api, slug, graph_with("z"), 1)

    missing = freeze(api, slug, None)
    stale = freeze(api, slug, 1)

    assert missing.status_code == 428
    assert error_of(missing)["code"] == "precondition_required"
    assert stale.status_code == 412
    assert error_of(stale)["details"] == {"revision": 2}
    assert not Version.objects.exists()


def test_a_freeze_note_of_the_wrong_shape_is_a_bad_request(
    api: Caller, new_document: NewDocument
) -> None:
    slug = new_document("Flow", GRAPH)["slug"]

    response = api.post(
        f"/v1/documents/{slug}/freeze", {"note": ["x"]}, headers={"If-Match": '"1"'}
    )

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"


def test_the_versions_list_pages(api: Caller, new_document: NewDocument) -> None:
    slug = new_document("Flow", graph_with("v0"))["slug"]
    for index in range(3):
        put_draft(api, slug, graph_with(f"v{index + 1}"), index + 1)
        freeze(api, slug, index + 2)

    first = api.get(f"/v1/documents/{slug}/versions?limit=2").json()
    rest = api.get(f"/v1/documents/{slug}/versions?limit=2&cursor={first['next']}").json()

    assert [item["version"] for item in first["versions"]] == [3, 2]
    assert [item["version"] for item in rest["versions"]] == [1]
    assert rest["next"] is None


def test_a_version_refuses_to_be_updated_or_deleted(api: Caller, new_document: NewDocument) -> None:
    slug = new_document("Flow", GRAPH)["slug"]
    freeze(api, slug, 1)
    version = Version.objects.get()

    version.note = "rewritten"
    with pytest.raises(ImmutableRecord):
        version.save()
    with pytest.raises(ImmutableRecord):
        version.delete()
    with pytest.raises(ImmutableRecord):
        Version.objects.update(note="rewritten")
    with pytest.raises(ImmutableRecord):
        Version.objects.all().delete()
    assert Version.objects.get().note == ""


# --- Diff ---------------------------------------------------------------------------------


def test_the_diff_between_a_version_and_the_draft_names_what_changed(
    api: Caller, new_document: NewDocument
) -> None:
    before = graph_with("a", "b")
    slug = new_document("Flow", before)["slug"]
    freeze(api, slug, 1)
    after = graph_with("a", "c")
    after["nodes"][0]["payload"]["name"] = "Start"
    put_draft(api, slug, after, 1)

    response = api.get(f"/v1/documents/{slug}/diff?from={hash_of(before)}&to=draft")

    assert response.status_code == 200
    assert response.json() == {
        "identical": False,
        "from": hash_of(before),
        "to": "draft",
        "nodes": {
            "added": ["c"],
            "removed": ["b"],
            "changed": [{"node": "a", "fields": [{"path": "name", "to": "Start"}]}],
        },
        "edges": {"added": [{"from": "a", "to": "c"}], "removed": [{"from": "a", "to": "b"}]},
    }


def test_the_diff_of_a_graph_with_itself_is_identical(
    api: Caller, new_document: NewDocument
) -> None:
    slug = new_document("Flow", GRAPH)["slug"]
    freeze(api, slug, 1)

    body = api.get(f"/v1/documents/{slug}/diff?from=draft&to={hash_of(GRAPH)}").json()

    assert body["identical"] is True
    assert body["nodes"] == {"added": [], "removed": [], "changed": []}
    assert body["edges"] == {"added": [], "removed": []}


def test_the_diff_accepts_any_stored_graph(api: Caller, new_document: NewDocument) -> None:
    elsewhere = api.post("/v1/graphs", graph_with("q")).json()["graph"]
    slug = new_document("Flow", GRAPH)["slug"]

    response = api.get(f"/v1/documents/{slug}/diff?from={elsewhere}&to=draft")

    assert response.status_code == 200
    assert response.json()["nodes"]["removed"] == ["q"]


def test_the_diff_of_a_draft_that_does_not_parse_is_400_invalid_graph(
    api: Caller, new_document: NewDocument
) -> None:
    slug = new_document("Flow", "{ nope")["slug"]
    stored = api.post("/v1/graphs", GRAPH).json()["graph"]

    response = api.get(f"/v1/documents/{slug}/diff?from={stored}&to=draft")

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_graph"
    assert error["message"] == "the graph document is not well formed"


@pytest.mark.parametrize("side", ["sha256:" + "0" * 64, "sha256:nope", "latest"])
def test_the_diff_with_an_unknown_or_malformed_hash_is_404_unknown_graph(
    api: Caller, new_document: NewDocument, side: str
) -> None:
    slug = new_document("Flow", GRAPH)["slug"]

    response = api.get(f"/v1/documents/{slug}/diff?from=draft&to={side}")

    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown_graph"


@pytest.mark.parametrize("query", ["", "?from=draft", "?to=draft"])
def test_the_diff_needs_both_sides(api: Caller, new_document: NewDocument, query: str) -> None:
    slug = new_document("Flow", GRAPH)["slug"]

    response = api.get(f"/v1/documents/{slug}/diff{query}")

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"
