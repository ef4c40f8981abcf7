"""``GET /v1/inbox`` and ``GET /v1/inbox/resolved`` (spec 05, *Inbox*)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from editor.graph import hash_value
from editor.models import Run
from tests.integration.api.callers import Caller, bearer_caller, error_of, make_user
from tests.integration.api.running import APPROVAL_SCHEMA, resume
from tests.integration.inbox import frozen, gated, parked, waiting

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(db: None) -> User:
    return make_user("otto", "operators")


def test_it_lists_what_waits_oldest_first_with_what_a_person_needs_to_decide(
    reader: Caller, author: User, operator: User
) -> None:
    slug, digest = frozen(author, gated(name="Final review"))
    first = waiting(author, operator, graph_hash=digest, document=slug, input={"note": "hi"})
    budget = parked(author, operator, "budget")
    reconciliation = parked(author, operator, "reconciliation")

    response = reader.get("/v1/inbox")

    assert response.status_code == 200
    body = response.json()
    assert body["next"] is None
    # park() records its events at one fixed time in the past: they are the oldest two.
    assert [item["kind"] for item in body["items"]][2] == "gate"
    by_kind = {item["kind"]: item for item in body["items"]}
    gate, raise_budget, reconcile = (by_kind[kind] for kind in ("gate", "budget", "reconciliation"))
    assert gate == {
        "kind": "gate",
        "run": first,
        "graph_hash": digest,
        "document": slug,
        "node": "review",
        "node_name": "Final review",
        "seq": gate["seq"],
        "suspended_at": gate["suspended_at"],
        "reason": "Publish?",
        "input_schema": APPROVAL_SCHEMA,
        "value": {"note": "hi"},
    }
    assert gate["suspended_at"].endswith("Z")
    assert raise_budget["run"] == budget
    assert raise_budget["kind"] == "budget"
    assert raise_budget["budget"] == {"kind": "steps", "limit": 2}
    assert raise_budget["observed"] == 3
    assert "value" not in raise_budget
    assert reconcile["run"] == reconciliation
    assert reconcile["kind"] == "reconciliation"
    assert reconcile["tool"] == "http_request"
    assert reconcile["input"] == {"url": "http://example.test/"}


def test_it_filters_by_graph_and_by_document(reader: Caller, author: User, operator: User) -> None:
    slug, digest = frozen(author, gated())
    in_document = waiting(author, operator, graph_hash=digest, document=slug)
    elsewhere = waiting(author, operator, gated(publish="ship"))
    other_hash = Run.objects.get(pk=elsewhere).graph_id

    by_graph = reader.get(f"/v1/inbox?graph={other_hash}").json()["items"]
    by_document = reader.get(f"/v1/inbox?document={slug}").json()["items"]

    assert [item["run"] for item in by_graph] == [elsewhere]
    assert [item["run"] for item in by_document] == [in_document]
    assert reader.get("/v1/inbox?document=nope").json() == {"items": [], "next": None}


def test_it_pages_with_an_opaque_cursor(reader: Caller, author: User, operator: User) -> None:
    digest = Run.objects.get(pk=waiting(author, operator)).graph_id
    for _ in range(4):
        waiting(author, operator, graph_hash=digest)

    first = reader.get("/v1/inbox?limit=2").json()
    second = reader.get(f"/v1/inbox?limit=2&cursor={first['next']}").json()
    third = reader.get(f"/v1/inbox?limit=2&cursor={second['next']}").json()

    runs = [item["run"] for page in (first, second, third) for item in page["items"]]
    assert len(runs) == len(set(runs)) == 5
    assert third["next"] is None
    bad = reader.get("/v1/inbox?cursor=not-a-cursor")
    assert bad.status_code == 400
    assert error_of(bad)["code"] == "bad_request"


def test_a_resolved_item_leaves_the_inbox_and_enters_the_decision_log(
    reader: Caller, author: User, operator: User, approver: User
) -> None:
    run_id = waiting(author, operator)
    budget = parked(author, operator, "budget")
    approve = bearer_caller(approver)
    assert (
        resume(approve, run_id, {"input": {"approved": True}, "comment": "ok"}).status_code == 202
    )
    assert resume(bearer_caller(operator), budget, {"input": {"limit": 5}}).status_code == 202

    pending = reader.get("/v1/inbox").json()
    resolved = reader.get("/v1/inbox/resolved").json()

    assert pending == {"items": [], "next": None}
    raised, approved = resolved["items"]
    assert approved == {
        "entry": "decision",
        "kind": "gate",
        "run": run_id,
        "graph_hash": Run.objects.get(pk=run_id).graph_id,
        "node": "review",
        "by": "april",
        "at": approved["at"],
        "input": {"approved": True},
        "comment": "ok",
        "schema_hash": hash_value(APPROVAL_SCHEMA),
    }
    assert raised["kind"] == "budget"
    assert raised["input"] == {"limit": 5}
    assert raised["by"] == "otto"
    assert raised["schema_hash"] is None


def test_the_decision_log_pages_newest_first(
    reader: Caller, author: User, operator: User, approver: User
) -> None:
    ids = [waiting(author, operator) for _ in range(3)]
    approve = bearer_caller(approver)
    for run_id in ids:
        resume(approve, run_id, {"input": {"approved": True}})

    first = reader.get("/v1/inbox/resolved?limit=2").json()
    second = reader.get(f"/v1/inbox/resolved?limit=2&cursor={first['next']}").json()

    assert [item["run"] for item in first["items"] + second["items"]] == ids[::-1]
    assert second["next"] is None


def test_the_inbox_needs_a_signed_in_caller(anonymous: Caller) -> None:
    for path in ("/v1/inbox", "/v1/inbox/resolved"):
        response = anonymous.get(path)
        assert response.status_code == 401
        assert error_of(response)["code"] == "unauthorized"


def test_only_approvers_resolve_a_gate_in_the_api_too(
    author: User, operator: User, approver: User
) -> None:
    run_id = waiting(author, operator)

    for user in (author, operator):
        refused = resume(bearer_caller(user), run_id, {"input": {"approved": True}})
        assert refused.status_code == 403
        assert error_of(refused)["code"] == "not_an_approver"
    assert resume(bearer_caller(approver), run_id, {"input": {"approved": True}}).status_code == 202
