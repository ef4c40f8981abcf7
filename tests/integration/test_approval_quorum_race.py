"""Twenty approvers answering one gate that needs several approvals, at the same moment, and
the quorum's last vote racing the gate's due time (issue 26: exactly-once stays under a quorum
and a deadline).

Real threads with their own database connections, released together at a barrier, on
PostgreSQL only (CI's second pass), where they truly write at once: SQLite serialises the
writers on its file, so the race these tests are about never happens there. Each approval is
appended at the log's next position; a writer that loses its position to another vote prepares
again on the longer log, and one that loses it to the resolution is told who resolved the gate.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from editor.models import InboxCard, RunEvent
from editor.services import documents, runs
from editor.services.documents import approvals
from editor.services.inbox import deadlines
from tests.integration.api.callers import bearer_caller, make_user
from tests.integration.api.running import GATED, drive
from tests.integration.api.test_concurrency import app_database, together
from tests.integration.test_inbox_race import queued_drives

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("race_database"),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="writers truly race on PostgreSQL only (SQLite serialises them on its file)",
    ),
]

APPROVERS = 20

race_database = app_database


def gate_waiting_for(quorum: int, **policy: Any) -> tuple[str, list[User]]:
    """A run of a document whose gate needs ``quorum`` approvals (and the rest of ``policy``),
    parked at the gate; and twenty approvers who neither started it nor wrote it."""
    author = make_user("ada", "authors")
    created = documents.create_document(author, title="Refunds", text=json.dumps(GATED))
    frozen = documents.freeze(author, created.slug, expected_revision=1)
    gate = {"quorum": quorum, **policy}
    approvals.replace_policy(author, created.slug, {"gates": {"review": gate}})
    operator = make_user("otto", "operators")
    run_id = runs.start_run(operator, frozen.graph, {"n": 1}, document_slug=created.slug).run
    assert drive(run_id) == "suspended"
    return run_id, [make_user(f"approver{n}", "approvers") for n in range(APPROVERS)]


def all_at_once(run_id: str, approvers: list[User]) -> list[Any]:
    callers = [bearer_caller(approver) for approver in approvers]
    responses = together(
        [
            lambda caller=caller: caller.post(
                f"/v1/runs/{run_id}/resume", {"input": {"approved": True}}
            )
            for caller in callers
        ]
    )
    errors = [response for response in responses if isinstance(response, BaseException)]
    assert not errors, errors
    return responses


@pytest.mark.parametrize("quorum", [2, 5])
def test_twenty_approvers_at_once_make_the_quorum_once_and_one_continuation(quorum: int) -> None:
    run_id, approvers = gate_waiting_for(quorum)
    drives_before = queued_drives(run_id)

    responses = all_at_once(run_id, approvers)

    accepted = [response for response in responses if response.status_code == 202]
    refused = [response for response in responses if response.status_code != 202]
    assert len(accepted) == quorum, [r.content for r in responses]
    assert sorted(response.json()["outcome"] for response in accepted) == sorted(
        ["driving"] + ["voted"] * (quorum - 1)
    )
    assert {response.status_code for response in refused} == {409}
    assert {response.json()["error"]["code"] for response in refused} == {"not_suspended"}
    votes = [row.payload for row in RunEvent.objects.filter(run_id=run_id, kind="ApprovalVoted")]
    [resumed] = [row.payload for row in RunEvent.objects.filter(run_id=run_id, kind="Resumed")]
    voters = [vote["by"] for vote in votes]
    assert len(voters) == len(set(voters)) == quorum - 1
    assert [vote["by"] for vote in resumed["votes"]] == voters
    assert resumed["by"] not in voters
    assert queued_drives(run_id) - drives_before == 1
    assert drive(run_id) == "completed"


def test_the_quorums_last_vote_and_a_rejection_racing_resolve_the_gate_once() -> None:
    run_id, approvers = gate_waiting_for(2)
    first, *rest = approvers
    assert runs.resume(first, run_id, {"input": {"approved": True}}).outcome == "voted"
    callers = [bearer_caller(approver) for approver in rest]
    answers = [{"approved": index % 2 == 0} for index in range(len(callers))]

    responses = together(
        [
            lambda caller=caller, answer=answer: caller.post(
                f"/v1/runs/{run_id}/resume", {"input": answer}
            )
            for caller, answer in zip(callers, answers, strict=True)
        ]
    )

    assert sorted(response.status_code for response in responses) == [202] + [409] * (APPROVERS - 2)
    [resumed] = RunEvent.objects.filter(run_id=run_id, kind="Resumed")
    assert [vote["by"] for vote in resumed.payload["votes"]] == [first.username]
    assert RunEvent.objects.filter(run_id=run_id, kind="ApprovalVoted").count() == 1
    assert drive(run_id) == "completed"


DEADLINE_WORKERS = 3


def test_the_quorums_last_vote_and_the_deadlines_resolution_racing_decide_the_gate_once() -> None:
    """One approval counted; then the approvals that would complete the quorum and three
    workers acting on the gate's due time (its policy resolves it with a value), all at once:
    one of them resolves the gate, by a person or by the deadline, and nothing twice."""
    value = {"approved": False, "note": "too late"}
    run_id, approvers = gate_waiting_for(2, due="1s", on_expiry={"resolve_with": value})
    first, *rest = approvers[: APPROVERS - DEADLINE_WORKERS + 1]
    assert runs.resume(first, run_id, {"input": {"approved": True}}).outcome == "voted"
    card = InboxCard.objects.get(run_id=run_id)
    past_due = card.due_at + timedelta(seconds=1)
    callers = [bearer_caller(approver) for approver in rest]
    drives_before = queued_drives(run_id)

    answers = together(
        [
            *(
                lambda caller=caller: caller.post(
                    f"/v1/runs/{run_id}/resume", {"input": {"approved": True}}
                )
                for caller in callers
            ),
            *(
                lambda: deadlines.act(run_id, card.seq, "expire", now=past_due)
                for _ in range(DEADLINE_WORKERS)
            ),
        ]
    )

    errors = [answer for answer in answers if isinstance(answer, BaseException)]
    assert not errors, errors
    people, workers = answers[: len(callers)], answers[len(callers) :]
    [resumed] = RunEvent.objects.filter(run_id=run_id, kind="Resumed")
    won_by_people = [response for response in people if response.status_code == 202]
    assert {response.status_code for response in people} <= {202, 409}
    if resumed.payload["by"] == "the deadline":
        assert not won_by_people
        assert sorted(workers) == ["gone", "gone", "resolved"]
        assert resumed.payload["input"] == value
    else:
        assert len(won_by_people) == 1
        assert set(workers) == {"gone"}
    assert [vote["by"] for vote in resumed.payload["votes"]] == [first.username]
    assert RunEvent.objects.filter(run_id=run_id, kind="ApprovalVoted").count() == 1
    assert not InboxCard.objects.filter(run_id=run_id).exists()
    assert queued_drives(run_id) - drives_before == 1
    assert drive(run_id) == "completed"
