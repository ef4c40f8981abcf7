"""The inbox for a person (issue 26) through ``/v1``: the views ``mine``, ``groups`` and ``all``
sorted by due time, claims (``POST /v1/runs/{id}/claim`` and ``/release``), and decisions of
several cards at once (``POST /v1/inbox/decisions``) with every refusal a card can meet."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from editor.models import InboxNote, RunEvent
from editor.services import documents, runs
from editor.services.documents import approvals
from tests.integration.api.callers import bearer_caller, error_of, make_user
from tests.integration.api.running import GATED, drive, event_count

pytestmark = pytest.mark.django_db

APPROVE = {"approved": True, "note": "fine"}


@pytest.fixture
def team(db: None) -> dict[str, User]:
    """ada writes the document; otto starts runs; fay (finance) and dan (desk) approve; sam is
    an operator who approves too; nina has no role."""
    for name in ("finance", "desk"):
        Group.objects.create(name=name)
    people = {
        "ada": make_user("ada", "authors"),
        "otto": make_user("otto", "operators"),
        "fay": make_user("fay", "approvers"),
        "dan": make_user("dan", "approvers"),
        "sam": make_user("sam", "operators"),
        "nina": make_user("nina"),
    }
    people["fay"].groups.add(Group.objects.get(name="finance"))
    people["dan"].groups.add(Group.objects.get(name="desk"))
    people["sam"].groups.add(Group.objects.get(name="approvers"))
    return people


def document(author: User, title: str, policy: dict[str, Any] | None = None) -> tuple[str, str]:
    created = documents.create_document(author, title=title, text=json.dumps(GATED))
    digest = documents.freeze(author, created.slug, expected_revision=1).graph
    if policy is not None:
        approvals.replace_policy(author, created.slug, {"gates": {"review": policy}})
    return created.slug, digest


def waiting(starter: User, made: tuple[str, str], note: str = "refund") -> str:
    slug, digest = made
    run_id = runs.start_run(starter, digest, {"note": note}, document_slug=slug).run
    assert drive(run_id) == "suspended"
    return run_id


FINANCE = {"deciders": {"groups": ["finance"], "users": []}, "due": "2h", "quorum": 2}
DESK = {"deciders": {"groups": ["desk"], "users": []}, "due": "30m"}


def runs_of(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return [item["run"] for item in response.json()["items"]]


def test_mine_lists_the_cards_a_person_may_decide_due_first_and_groups_their_teams(
    team: dict[str, User],
) -> None:
    finance = waiting(team["otto"], document(team["ada"], "Refunds", FINANCE))
    desk = waiting(team["otto"], document(team["ada"], "Desk", DESK))
    anyone = waiting(team["otto"], document(team["ada"], "Notes"))  # the approvers role
    own = waiting(team["sam"], document(team["ada"], "Own"))  # sam started it: four eyes

    fay, sam = bearer_caller(team["fay"]), bearer_caller(team["sam"])
    assert runs_of(fay.get("/v1/inbox?view=mine")) == [finance, anyone, own]
    assert runs_of(bearer_caller(team["dan"]).get("/v1/inbox?view=mine")) == [desk, anyone, own]
    assert runs_of(fay.get("/v1/inbox?view=groups")) == [finance]
    assert runs_of(sam.get("/v1/inbox?view=mine")) == [anyone]
    assert runs_of(sam.get("/v1/inbox?view=all")) == [desk, finance, anyone, own]
    item = fay.get("/v1/inbox?view=mine").json()["items"][0]
    assert item["quorum"] == 2 and item["approvals"] == 0
    assert item["overdue"] is False and item["due_soon"] is False
    assert item["due_at"] > item["suspended_at"]
    # Without a view, every item oldest first, as before.
    assert runs_of(bearer_caller(team["nina"]).get("/v1/inbox")) == [finance, desk, anyone, own]


def test_a_view_that_is_not_one_or_all_for_a_non_operator_is_refused_naming_it(
    team: dict[str, User],
) -> None:
    fay = bearer_caller(team["fay"])

    unknown = fay.get("/v1/inbox?view=everything")
    everything = fay.get("/v1/inbox?view=all")

    assert unknown.status_code == 400
    assert error_of(unknown)["details"] == {"field": "view"}
    assert everything.status_code == 403
    assert "operators" in error_of(everything)["message"]


def test_a_claim_is_seen_by_others_who_may_still_decide_and_only_its_holder_releases_it(
    team: dict[str, User],
) -> None:
    run_id = waiting(team["otto"], document(team["ada"], "Notes"))
    fay, sam = bearer_caller(team["fay"]), bearer_caller(team["sam"])

    taken = fay.post(f"/v1/runs/{run_id}/claim", {})
    again = fay.post(f"/v1/runs/{run_id}/claim", {"node": "review"})
    refused = sam.post(f"/v1/runs/{run_id}/claim", {})
    seen = sam.get("/v1/inbox?view=mine").json()["items"][0]
    not_theirs = sam.post(f"/v1/runs/{run_id}/release", {})

    assert taken.status_code == 200, taken.content
    assert (
        taken.json()["claimed_by"] == "fay" and taken.json()["until"] > taken.json()["claimed_at"]
    )
    assert again.json()["claimed_at"] == taken.json()["claimed_at"]  # renewed, not taken again
    assert again.json()["until"] >= taken.json()["until"]
    assert refused.status_code == 409
    assert error_of(refused)["code"] == "claimed"
    assert error_of(refused)["details"]["claimed_by"] == "fay"
    assert seen["claim"]["by"] == "fay"
    assert not_theirs.status_code == 409 and error_of(not_theirs)["code"] == "not_claimed"

    released = fay.post(f"/v1/runs/{run_id}/release", {})
    assert released.status_code == 200 and released.json()["claimed_by"] is None
    assert "claim" not in sam.get("/v1/inbox?view=mine").json()["items"][0]
    assert [note.kind for note in InboxNote.objects.order_by("id")] == ["claim", "release"]

    # Someone else may decide a claimed card; the claim goes with it.
    fay.post(f"/v1/runs/{run_id}/claim", {})
    decided = sam.post(f"/v1/runs/{run_id}/resume", {"input": APPROVE})
    assert decided.status_code == 202
    gone = fay.post(f"/v1/runs/{run_id}/release", {})
    assert gone.status_code == 409 and error_of(gone)["code"] == "not_suspended"


def test_a_claim_is_refused_to_anyone_the_policy_keeps_from_deciding_and_records_nothing(
    team: dict[str, User],
) -> None:
    policy = {"deciders": {"groups": ["finance"], "users": ["sam"]}, "quorum": 2}
    run_id = waiting(team["sam"], document(team["ada"], "Refunds", policy))  # sam started it
    fay = bearer_caller(team["fay"])
    fay.post(f"/v1/runs/{run_id}/resume", {"input": APPROVE})  # one of two approvals

    codes = {
        name: error_of(bearer_caller(team[name]).post(f"/v1/runs/{run_id}/claim", {}))["code"]
        for name in ("dan", "sam", "fay", "nina")
    }

    assert codes == {
        "dan": "not_an_approver",
        "sam": "four_eyes",
        "fay": "already_voted",
        "nina": "forbidden",
    }
    assert not InboxNote.objects.exists()


def five_cards(team: dict[str, User], policy: dict[str, Any] | None = None) -> list[str]:
    made = document(team["ada"], "Refunds", policy)
    return [waiting(team["otto"], made, f"refund {n}") for n in range(5)]


def decide(caller: Any, run_ids: list[str], answer: Any = None, **body: Any) -> Any:
    items = [{"run": run_id} for run_id in run_ids]
    return caller.post("/v1/inbox/decisions", {"items": items, "input": answer or APPROVE, **body})


def test_five_cards_of_one_gate_are_decided_with_one_answer_each_on_its_own(
    team: dict[str, User],
) -> None:
    cards = five_cards(team)

    response = decide(bearer_caller(team["fay"]), cards, {"approved": True}, comment="batch")

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["decided"], body["failed"]) == (5, 0)
    assert [result["outcome"] for result in body["results"]] == ["driving"] * 5
    resumed = [RunEvent.objects.get(run_id=run_id, kind="Resumed").payload for run_id in cards]
    # Each card keeps its own run's value for the key the answer leaves out (`note`).
    assert [payload["input"] for payload in resumed] == [
        {"approved": True, "note": f"refund {n}"} for n in range(5)
    ]
    assert {payload["by"] for payload in resumed} == {"fay"}
    assert {payload["comment"] for payload in resumed} == {"batch"}


def test_a_partial_failure_lists_each_card_not_decided_with_its_own_refusal(
    team: dict[str, User],
) -> None:
    policy = {"deciders": {"groups": ["finance"], "users": ["sam"]}, "quorum": 2}
    made = document(team["ada"], "Refunds", policy)
    own = waiting(team["sam"], made)  # four eyes keeps sam out
    voted = waiting(team["otto"], made)
    gone = waiting(team["otto"], made)
    fine = waiting(team["otto"], made)
    sam, fay = bearer_caller(team["sam"]), bearer_caller(team["fay"])
    sam.post(f"/v1/runs/{voted}/resume", {"input": APPROVE})
    fay.post(f"/v1/runs/{gone}/resume", {"input": {"approved": False}})  # a rejection decides
    counts = {run_id: event_count(run_id) for run_id in (own, voted, gone)}

    response = decide(sam, [own, voted, gone, fine])
    wrong = decide(fay, [fine], {"approved": "yes"})
    outsider = decide(bearer_caller(team["dan"]), [fine])

    results = {result["run"]: result for result in response.json()["results"]}
    assert response.status_code == 200
    assert (response.json()["decided"], response.json()["failed"]) == (1, 3)
    assert results[fine]["outcome"] == "voted"
    assert results[own]["error"]["code"] == "four_eyes"
    assert results[voted]["error"]["code"] == "already_voted"
    assert results[gone]["error"]["code"] == "not_suspended"
    assert results[gone]["error"]["details"]["resolved_by"] == "fay"
    assert wrong.json()["results"][0]["error"]["code"] == "approval_schema_violation"
    assert outsider.json()["results"][0]["error"]["code"] == "not_an_approver"
    assert {run_id: event_count(run_id) for run_id in counts} == counts


def test_cards_of_different_gates_or_schemas_are_refused_together_and_nothing_is_recorded(
    team: dict[str, User],
) -> None:
    first = waiting(team["otto"], document(team["ada"], "Refunds"))
    other_graph = json.loads(json.dumps(GATED))
    other_graph["nodes"][1]["payload"]["approval_schema"]["properties"]["note"]["maxLength"] = 9
    created = documents.create_document(team["ada"], title="Other", text=json.dumps(other_graph))
    digest = documents.freeze(team["ada"], created.slug, expected_revision=1).graph
    second = waiting(team["otto"], (created.slug, digest))
    fay = bearer_caller(team["fay"])
    before = (event_count(first), event_count(second))

    mixed = decide(fay, [first, second])
    too_many = fay.post("/v1/inbox/decisions", {"items": [{"run": first}] * 51, "input": APPROVE})
    not_a_run = fay.post("/v1/inbox/decisions", {"items": [{"run": "x"}], "input": APPROVE})
    no_role = decide(bearer_caller(team["nina"]), [first])

    assert mixed.status_code == 400
    assert error_of(mixed)["code"] == "mixed_cards"
    assert [card["run"] for card in error_of(mixed)["details"]["cards"]] == [second]
    assert too_many.status_code == 400 and error_of(too_many)["code"] == "bad_request"
    assert not_a_run.status_code == 400
    assert error_of(not_a_run)["details"] == {"field": "items[0].run"}
    assert no_role.status_code == 403 and error_of(no_role)["code"] == "forbidden"
    assert (event_count(first), event_count(second)) == before
