"""Resolving one suspension at the same moment, in real threads with their own connections
(spec 04, *Suspension and resume*: exactly once, enforced by the database).

The set-up (a database file on SQLite, writers released together at a barrier) is
``test_concurrency``'s.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from editor.models import RunEvent
from tests.integration.api import test_concurrency
from tests.integration.api.callers import bearer_caller, make_user
from tests.integration.api.running import GATED, drive, start, store
from tests.integration.api.test_concurrency import WRITERS, together

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("race_database")]

#: The database every writer's connection reaches (a migrated file on SQLite).
race_database = test_concurrency.app_database


@pytest.fixture
def suspended(request: pytest.FixtureRequest) -> str:
    """A run of GATED, driven to its gate."""
    request.getfixturevalue("race_database")
    author = bearer_caller(make_user("ada", "authors"))
    operator = bearer_caller(make_user("otto", "operators"))
    run_id = start(operator, store(author, GATED), input={"draft": "Tea is good."})
    assert drive(run_id) == "suspended"
    return run_id


@pytest.fixture
def approvers(request: pytest.FixtureRequest) -> list[User]:
    request.getfixturevalue("race_database")
    return [make_user(f"approver{index}", "approvers") for index in range(WRITERS)]


def test_of_approvers_resolving_one_gate_together_exactly_one_succeeds(
    suspended: str, approvers: list[User]
) -> None:
    callers = [bearer_caller(approver) for approver in approvers]

    responses = together(
        [
            lambda caller=caller: caller.post(
                f"/v1/runs/{suspended}/resume", {"input": {"approved": True}}
            )
            for caller in callers
        ]
    )

    statuses = sorted(response.status_code for response in responses)
    assert statuses == [202] + [409] * (WRITERS - 1), [r.content for r in responses]
    resumed = RunEvent.objects.get(run_id=suspended, kind="Resumed")
    winner = resumed.payload["by"]
    assert winner in {approver.username for approver in approvers}
    for response in responses:
        if response.status_code == 409:
            error = response.json()["error"]
            assert error["code"] == "not_suspended"
            assert error["details"]["resolved_by"] == winner
            assert error["details"]["resolved_at"] == resumed.recorded_at


def test_a_resolution_and_an_abandon_together_leave_one_of_them_recorded(
    suspended: str, approvers: list[User]
) -> None:
    approver = bearer_caller(approvers[0])
    operator = bearer_caller(User.objects.get(username="otto"))

    resolved, abandoned = together(
        [
            lambda: approver.post(f"/v1/runs/{suspended}/resume", {"input": {"approved": True}}),
            lambda: operator.post(f"/v1/runs/{suspended}/abandon", {"reason": "stop"}),
        ]
    )

    kinds = list(
        RunEvent.objects.filter(run_id=suspended, kind__in=["Resumed", "RunAbandoned"])
        .order_by("seq")
        .values_list("kind", flat=True)
    )
    assert abandoned.status_code == 200  # a resolved run can still be abandoned
    if resolved.status_code == 202:
        assert kinds == ["Resumed", "RunAbandoned"]
    else:
        assert resolved.status_code == 409
        assert resolved.json()["error"]["code"] == "not_suspended"
        assert kinds == ["RunAbandoned"]
