"""Approval policies (issue 26): ``GET/PUT /v1/documents/{slug}/approvals``, the policy a run
records when it starts, and its refusals on ``POST /v1/runs/{id}/resume`` (``not_an_approver``,
``four_eyes``, ``already_voted``), a quorum of distinct approvers, and the decision log."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from editor.engine import audit
from editor.models import Document, Run, RunEvent
from editor.services import documents, runs
from editor.services.runs import forks
from editor.store import envelope_of
from tests.integration.api.callers import Caller, bearer_caller, error_of, make_user
from tests.integration.api.running import GATED, drive, event_count, resume

APPROVE = {"input": {"approved": True, "note": "fine"}}
REJECT = {"input": {"approved": False, "note": "no"}}


@pytest.fixture
def operator(db: None) -> User:
    return make_user("otto", "operators")


@pytest.fixture
def finance(db: None) -> Group:
    return Group.objects.create(name="finance")


def approver_in(name: str, *groups: Group) -> User:
    """An approver, also in ``groups``."""
    user = make_user(name, "approvers")
    user.groups.add(*groups)
    return user


def frozen(author: User, graph: dict[str, Any] = GATED, title: str = "Refunds") -> tuple[str, str]:
    """A document holding ``graph``, frozen as its version 1: (slug, graph hash)."""
    created = documents.create_document(author, title=title, text=json.dumps(graph))
    version = documents.freeze(author, created.slug, expected_revision=1)
    return created.slug, version.graph


def policy_url(slug: str) -> str:
    return f"/v1/documents/{slug}/approvals"


def put_policy(caller: Caller, slug: str, gates: dict[str, Any]) -> Any:
    return caller.put(policy_url(slug), {"gates": gates})


def waiting_run(starter: User, slug: str, digest: str) -> str:
    """A run of the document's graph started by ``starter``, parked at its gate."""
    run_id = runs.start_run(starter, digest, {"note": "refund 40"}, document_slug=slug).run
    assert drive(run_id) == "suspended"
    return run_id


def first_event(run_id: str) -> dict[str, Any]:
    return RunEvent.objects.get(run_id=run_id, seq=0).payload


DEFAULT_GATE = {
    "deciders": {"groups": ["approvers"], "users": []},
    "four_eyes": True,
    "quorum": 1,
    "due": None,
    "remind_at": None,
    "on_expiry": None,
}


# --- The policy endpoint ----------------------------------------------------------------------


def test_a_new_documents_gates_answer_the_defaults_with_four_eyes_on(
    api: Caller, author: User
) -> None:
    slug, _ = frozen(author)

    response = api.get(policy_url(slug))

    assert response.status_code == 200
    assert response.json() == {"gates": {"review": DEFAULT_GATE}}


def test_a_document_from_before_policies_keeps_four_eyes_off_for_the_gates_it_leaves_out(
    api: Caller, author: User
) -> None:
    slug, _ = frozen(author)
    Document.objects.filter(slug=slug).update(four_eyes_default=False)  # as migration 0021 does

    gates = api.get(policy_url(slug)).json()["gates"]

    assert gates["review"]["four_eyes"] is False


def test_an_author_sets_a_gates_policy_and_reads_it_back_in_the_same_shape(
    api: Caller, author: User, finance: Group
) -> None:
    slug, _ = frozen(author)
    make_user("fiona", "approvers")
    policy = {
        "deciders": {"groups": ["finance"], "users": ["fiona"]},
        "four_eyes": False,
        "quorum": 2,
        "due": "24h",
        "remind_at": "75%",
        "on_expiry": {"escalate_to": {"groups": ["approvers"], "users": []}},
    }

    saved = put_policy(api, slug, {"review": policy})
    read = api.get(policy_url(slug))

    assert saved.status_code == 200, saved.content
    # A due time is answered in its largest whole units.
    expected = {"gates": {"review": {**policy, "due": "1d"}}}
    assert saved.json() == expected
    assert read.json() == expected


def test_a_gate_left_out_of_a_put_goes_back_to_the_defaults(api: Caller, author: User) -> None:
    slug, _ = frozen(author)
    assert put_policy(api, slug, {"review": {"quorum": 3}}).status_code == 200

    cleared = put_policy(api, slug, {})

    assert cleared.json() == {"gates": {"review": DEFAULT_GATE}}


@pytest.mark.parametrize(
    ("gate", "field", "words"),
    [
        ({"quorum": 0}, "quorum", "from 1 to 5"),
        ({"quorum": 6}, "quorum", "from 1 to 5"),
        ({"quorum": "2"}, "quorum", "whole number"),
        ({"quorum": 2.5}, "quorum", "whole number"),
        ({"four_eyes": "yes"}, "four_eyes", "true or false"),
        ({"due": "soon"}, "due", "like `24h`"),
        ({"due": "0s"}, "due", "1 second to 366 days"),
        ({"due": "400d"}, "due", "1 second to 366 days"),
        ({"due": "1h", "remind_at": "150%"}, "remind_at", "`1%` to `99%`"),
        ({"remind_at": "50%"}, "remind_at", "needs a due time"),
        ({"deciders": {"groups": [], "users": []}}, "deciders", "at least one group or user"),
        ({"deciders": {"groups": ["nobody-has-this"]}}, "deciders.groups", "no group is named"),
        ({"deciders": {"users": ["ghost"]}}, "deciders.users", "no user is named"),
        ({"deciders": {"roles": ["x"]}}, "deciders.roles", "is not a field"),
        ({"due": "1h", "on_expiry": {"archive": True}}, "on_expiry.archive", "is not a field"),
        ({"on_expiry": {"resolve_with": {"approved": True}}}, "on_expiry", "needs a due time"),
        ({"colour": "red"}, "colour", "is not a field of a gate's policy"),
    ],
)
def test_a_bad_value_is_400_invalid_policy_naming_the_gate_and_field_and_nothing_is_saved(
    api: Caller, author: User, gate: dict[str, Any], field: str, words: str
) -> None:
    slug, _ = frozen(author)

    response = put_policy(api, slug, {"review": gate})

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_policy"
    assert error["details"]["gate"] == "review"
    assert error["details"]["field"] == field
    assert words in error["message"]
    assert api.get(policy_url(slug)).json() == {"gates": {"review": DEFAULT_GATE}}


def test_a_gate_the_draft_does_not_have_is_400_naming_it(api: Caller, author: User) -> None:
    slug, _ = frozen(author)

    response = put_policy(api, slug, {"review": {"quorum": 2}, "reveiw": {"quorum": 2}})

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_policy"
    assert error["details"]["gate"] == "reveiw"
    assert "the draft has no gate `reveiw`" in error["message"]
    # The gate that was right is not saved either.
    assert api.get(policy_url(slug)).json()["gates"]["review"]["quorum"] == 1


def test_a_value_to_resolve_with_that_breaks_the_gates_approval_schema_is_400(
    api: Caller, author: User
) -> None:
    slug, _ = frozen(author)
    gate = {"due": "2h", "on_expiry": {"resolve_with": {"approved": "maybe"}}}

    refused = put_policy(api, slug, {"review": gate})
    fine = put_policy(
        api, slug, {"review": {**gate, "on_expiry": {"resolve_with": {"approved": False}}}}
    )

    assert refused.status_code == 400
    error = error_of(refused)
    assert error["details"]["field"] == "on_expiry.resolve_with"
    assert "does not match the gate's approval schema" in error["message"]
    assert "$.approved" in error["message"]
    assert fine.status_code == 200, fine.content
    assert fine.json()["gates"]["review"]["on_expiry"] == {"resolve_with": {"approved": False}}


@pytest.mark.parametrize("actor", ["approver", "nobody"])
def test_only_authors_and_operators_change_a_policy(
    request: pytest.FixtureRequest, author: User, operator: User, actor: str
) -> None:
    slug, _ = frozen(author)
    refused = put_policy(bearer_caller(request.getfixturevalue(actor)), slug, {"review": {}})
    by_operator = put_policy(bearer_caller(operator), slug, {"review": {"quorum": 2}})

    assert refused.status_code == 403
    assert error_of(refused)["code"] == "forbidden"
    assert by_operator.status_code == 200
    # Anyone signed in reads it.
    read = bearer_caller(request.getfixturevalue(actor)).get(policy_url(slug))
    assert read.json()["gates"]["review"]["quorum"] == 2


def test_an_unknown_document_is_404(api: Caller) -> None:
    assert error_of(api.get(policy_url("no-such")))["code"] == "unknown_document"
    assert put_policy(api, "no-such", {}).status_code == 404


def test_a_renamed_gate_keeps_its_policy_flagged_until_it_is_left_out(
    api: Caller, author: User
) -> None:
    slug, _ = frozen(author)
    assert put_policy(api, slug, {"review": {"quorum": 2}}).status_code == 200
    renamed = json.loads(json.dumps(GATED).replace('"review"', '"approve"'))
    documents.save_draft(author, slug, text=json.dumps(renamed), expected_revision=1)

    read = api.get(policy_url(slug)).json()
    changed = put_policy(api, slug, {"review": {"quorum": 3}})
    kept = put_policy(api, slug, read["gates"])
    removed = put_policy(api, slug, {})

    assert read["gates"]["review"]["quorum"] == 2
    assert read["gates"]["approve"] == DEFAULT_GATE
    assert read["warnings"] == [
        {
            "gate": "review",
            "code": "gate_not_in_draft",
            "message": "the draft has no gate `review` (renamed or removed): its policy is kept "
            "for the versions that have it, until it is left out",
        }
    ]
    assert changed.status_code == 400
    assert "can be kept as it is, or left out to remove it" in error_of(changed)["message"]
    assert kept.status_code == 200
    assert kept.json()["gates"]["review"]["quorum"] == 2
    assert removed.json() == {"gates": {"approve": DEFAULT_GATE}}


# --- Bound at start ---------------------------------------------------------------------------


def test_a_run_records_the_policy_in_force_when_it_starts_and_an_edit_changes_future_runs_only(
    api: Caller, author: User, operator: User
) -> None:
    slug, digest = frozen(author)
    assert put_policy(api, slug, {"review": {"quorum": 2}}).status_code == 200
    before = waiting_run(operator, slug, digest)
    assert put_policy(api, slug, {"review": {"quorum": 3, "four_eyes": False}}).status_code == 200
    after = waiting_run(operator, slug, digest)

    old, new = first_event(before)["approval_policy"], first_event(after)["approval_policy"]

    assert old["document"] == slug
    assert old["gates"]["review"]["quorum"] == 2
    assert old["gates"]["review"]["four_eyes"] is True
    assert old["authors"] == ["ada"]
    assert new["gates"]["review"]["quorum"] == 3
    # The row keeps the same record, for the inbox.
    assert Run.objects.get(pk=before).approval_policy == old
    # The older run is decided under its own policy: two approvals.
    first = resume(bearer_caller(make_user("amy", "approvers")), before, APPROVE)
    assert first.json()["outcome"] == "voted"


def test_a_run_started_by_hash_takes_the_policy_of_the_document_that_froze_the_graph_first(
    api: Caller, author: User, operator: User
) -> None:
    slug, digest = frozen(author)
    put_policy(api, slug, {"review": {"quorum": 2}})

    response = bearer_caller(operator).post("/v1/graph-runs", {"graph_hash": digest})
    run_id = response.json()["run"]

    policy = first_event(run_id)["approval_policy"]
    assert policy["document"] == slug
    assert policy["gates"]["review"]["quorum"] == 2


def test_a_graph_no_document_froze_records_no_policy_and_keeps_the_approvers_rule(
    api: Caller, operator: User
) -> None:
    digest = api.post("/v1/graphs", GATED).json()["graph"]
    both = make_user("bo", "operators")
    both.groups.add(Group.objects.get(name="approvers"))
    run_id = bearer_caller(both).post("/v1/graph-runs", {"graph_hash": digest}).json()["run"]
    assert drive(run_id) == "suspended"

    # The reference's clients start and resume with one token: no four eyes here.
    decided = resume(bearer_caller(both), run_id, APPROVE)

    assert "approval_policy" not in first_event(run_id)
    assert decided.status_code == 202, decided.content


def test_a_test_run_of_the_draft_records_no_policy_and_its_author_decides_it(
    api: Caller, author: User
) -> None:
    slug, _ = frozen(author)
    put_policy(api, slug, {"review": {"quorum": 3}})
    run_id = api.post(f"/v1/documents/{slug}/test-runs", {"input": {"n": 1}}).json()["run"]
    assert drive(run_id) == "suspended"

    # Four eyes and the quorum are the frozen versions' runs': a test run is its author's.
    decided = resume(api, run_id, APPROVE)

    assert "approval_policy" not in first_event(run_id)
    assert decided.status_code == 202, decided.content
    assert decided.json()["outcome"] == "driving"


def test_a_fork_records_the_policy_in_force_when_it_is_made(
    api: Caller, author: User, operator: User
) -> None:
    slug, digest = frozen(author)
    origin = waiting_run(operator, slug, digest)
    resume(bearer_caller(make_user("amy", "approvers")), origin, APPROVE)
    assert drive(origin) == "completed"
    put_policy(api, slug, {"review": {"quorum": 4}})

    fork = forks.fork_run(operator, origin, "review")

    assert first_event(origin)["approval_policy"]["gates"]["review"]["quorum"] == 1
    assert first_event(fork.run)["approval_policy"]["gates"]["review"]["quorum"] == 4
    assert first_event(fork.run)["forked_from"]["run_id"] == origin


def test_the_policy_and_the_votes_are_modelled_events_so_the_audit_stays_clean(
    api: Caller, author: User, operator: User
) -> None:
    slug, digest = frozen(author)
    put_policy(api, slug, {"review": {"quorum": 2}})
    run_id = waiting_run(operator, slug, digest)
    resume(bearer_caller(make_user("amy", "approvers")), run_id, APPROVE)
    resume(bearer_caller(make_user("ben", "approvers")), run_id, APPROVE)
    assert drive(run_id) == "completed"

    report = audit(envelope_of(row) for row in RunEvent.objects.filter(run_id=run_id))

    assert report.clean, (report.unknown_kinds, report.unmodeled)


# --- Refusals ---------------------------------------------------------------------------------


def test_a_person_the_policy_does_not_name_is_403_not_an_approver_naming_who_may(
    api: Caller, author: User, operator: User, approver: User, finance: Group
) -> None:
    slug, digest = frozen(author)
    put_policy(api, slug, {"review": {"deciders": {"groups": ["finance"], "users": []}}})
    run_id = waiting_run(operator, slug, digest)
    before = event_count(run_id)

    refused = resume(bearer_caller(approver), run_id, APPROVE)
    allowed = resume(bearer_caller(approver_in("fay", finance)), run_id, APPROVE)

    assert refused.status_code == 403
    error = error_of(refused)
    assert error["code"] == "not_an_approver"
    assert error["details"] == {"node": "review", "groups": ["finance"], "users": []}
    assert "the group finance" in error["message"]
    assert allowed.status_code == 202, allowed.content
    assert event_count(run_id) == before + 1


def test_a_named_decider_without_the_approvers_role_is_403_not_an_approver(
    api: Caller, author: User, operator: User, finance: Group
) -> None:
    slug, digest = frozen(author)
    put_policy(api, slug, {"review": {"deciders": {"groups": ["finance"], "users": []}}})
    run_id = waiting_run(operator, slug, digest)
    outsider = make_user("fred", "finance")
    before = event_count(run_id)

    refused = resume(bearer_caller(outsider), run_id, APPROVE)

    assert refused.status_code == 403
    error = error_of(refused)
    assert error["code"] == "not_an_approver"
    assert "needs the approvers role" in error["message"]
    assert event_count(run_id) == before


def test_the_runs_starter_is_403_four_eyes(api: Caller, author: User) -> None:
    slug, digest = frozen(author)
    starter = make_user("sam", "operators")
    starter.groups.add(Group.objects.get(name="approvers"))
    run_id = waiting_run(starter, slug, digest)
    before = event_count(run_id)

    refused = resume(bearer_caller(starter), run_id, APPROVE)

    assert refused.status_code == 403
    error = error_of(refused)
    assert error["code"] == "four_eyes"
    assert error["details"] == {"node": "review", "reason": "started"}
    assert event_count(run_id) == before


def test_the_versions_author_is_403_four_eyes(operator: User) -> None:
    writer = make_user("wes", "authors")
    writer.groups.add(Group.objects.get(name="approvers"))
    slug, digest = frozen(writer)
    run_id = waiting_run(operator, slug, digest)

    refused = resume(bearer_caller(writer), run_id, APPROVE)

    assert refused.status_code == 403
    assert error_of(refused)["details"] == {"node": "review", "reason": "authored"}


def test_with_four_eyes_off_the_starter_decides(api: Caller, author: User) -> None:
    slug, digest = frozen(author)
    put_policy(api, slug, {"review": {"four_eyes": False}})
    starter = make_user("sam", "operators")
    starter.groups.add(Group.objects.get(name="approvers"))
    run_id = waiting_run(starter, slug, digest)

    assert resume(bearer_caller(starter), run_id, APPROVE).status_code == 202


# --- Quorum -----------------------------------------------------------------------------------


def test_a_quorum_of_two_needs_two_different_approvers_and_resumes_with_the_last_answer(
    api: Caller, author: User, operator: User
) -> None:
    slug, digest = frozen(author)
    put_policy(api, slug, {"review": {"quorum": 2}})
    run_id = waiting_run(operator, slug, digest)
    amy, ben = make_user("amy", "approvers"), make_user("ben", "approvers")

    first = resume(bearer_caller(amy), run_id, APPROVE)
    again = resume(bearer_caller(amy), run_id, {"input": {"approved": True, "note": "twice"}})
    count = event_count(run_id)
    last = resume(bearer_caller(ben), run_id, {"input": {"approved": True, "note": "ok by me"}})

    assert first.status_code == 202
    assert first.json() == {"run": run_id, "status": "suspended", "outcome": "voted"}
    assert again.status_code == 409
    error = error_of(again)
    assert error["code"] == "already_voted"
    assert error["details"]["approvals"] == 1 and error["details"]["quorum"] == 2
    assert count == event_count(run_id) - 1  # the refusal recorded nothing; the last did
    assert last.status_code == 202
    assert last.json()["outcome"] == "driving"
    voted = RunEvent.objects.get(run_id=run_id, kind="ApprovalVoted").payload
    resumed = RunEvent.objects.get(run_id=run_id, kind="Resumed").payload
    assert voted["by"] == "amy" and voted["input"]["note"] == "fine"
    assert (voted["approvals"], voted["quorum"]) == (1, 2)
    assert resumed["by"] == "ben"
    assert resumed["input"] == {"approved": True, "note": "ok by me"}
    assert [vote["by"] for vote in resumed["votes"]] == ["amy"]
    assert resumed["quorum"] == 2
    assert drive(run_id) == "completed"
    exited = RunEvent.objects.get(run_id=run_id, kind="NodeExited", payload__node="review")
    assert exited.payload["output"] == {"approved": True, "note": "ok by me"}


def test_under_a_quorum_one_rejection_decides_at_once(
    api: Caller, author: User, operator: User
) -> None:
    slug, digest = frozen(author)
    put_policy(api, slug, {"review": {"quorum": 3}})
    run_id = waiting_run(operator, slug, digest)

    resume(bearer_caller(make_user("amy", "approvers")), run_id, APPROVE)
    rejected = resume(bearer_caller(make_user("ben", "approvers")), run_id, REJECT)

    assert rejected.json()["outcome"] == "driving"
    resumed = RunEvent.objects.get(run_id=run_id, kind="Resumed").payload
    assert resumed["input"]["approved"] is False
    assert [vote["by"] for vote in resumed["votes"]] == ["amy"]


def test_under_a_quorum_an_answer_that_breaks_the_schema_is_400_and_counts_for_nothing(
    api: Caller, author: User, operator: User
) -> None:
    slug, digest = frozen(author)
    put_policy(api, slug, {"review": {"quorum": 2}})
    run_id = waiting_run(operator, slug, digest)
    before = event_count(run_id)

    refused = resume(bearer_caller(make_user("amy", "approvers")), run_id, {"input": {"ok": 1}})

    assert refused.status_code == 400
    assert error_of(refused)["code"] == "approval_schema_violation"
    assert event_count(run_id) == before


def test_the_run_status_lists_the_votes_a_waiting_gate_has(
    api: Caller, author: User, operator: User
) -> None:
    slug, digest = frozen(author)
    put_policy(api, slug, {"review": {"quorum": 2}})
    run_id = waiting_run(operator, slug, digest)
    resume(bearer_caller(make_user("amy", "approvers")), run_id, APPROVE)

    [item] = Run.objects.get(pk=run_id).status["pending"]

    assert [vote["by"] for vote in item["votes"]] == ["amy"]


# --- The decision log -------------------------------------------------------------------------


def test_the_decision_log_shows_the_policy_in_force_and_every_vote(
    api: Caller, author: User, operator: User
) -> None:
    slug, digest = frozen(author)
    put_policy(api, slug, {"review": {"quorum": 2}})
    run_id = waiting_run(operator, slug, digest)
    resume(bearer_caller(make_user("amy", "approvers")), run_id, APPROVE)
    resume(bearer_caller(make_user("ben", "approvers")), run_id, {"input": {"approved": True}})

    items = api.get(f"/v1/inbox/resolved?run={run_id}").json()["items"]

    last, vote = items
    policy = {**DEFAULT_GATE, "quorum": 2}
    assert vote["by"] == "amy" and vote["vote"] is True
    assert vote["input"] == APPROVE["input"]
    assert vote["policy"] == policy
    assert last["by"] == "ben" and "vote" not in last
    assert [entry["by"] for entry in last["votes"]] == ["amy"]
    assert last["quorum"] == 2 and last["policy"] == policy
    # A person filter finds each voter's own entry.
    mine = api.get(f"/v1/inbox/resolved?run={run_id}&person=amy").json()["items"]
    assert [entry["by"] for entry in mine] == ["amy"]


def test_a_runs_own_policy_copy_is_left_alone_by_later_edits(
    api: Caller, author: User, operator: User
) -> None:
    slug, digest = frozen(author)
    run_id = waiting_run(operator, slug, digest)
    recorded = copy.deepcopy(first_event(run_id)["approval_policy"])

    put_policy(api, slug, {"review": {"quorum": 5}})

    assert first_event(run_id)["approval_policy"] == recorded
    assert Run.objects.get(pk=run_id).approval_policy == recorded
