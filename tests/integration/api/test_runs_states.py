"""A resolution moves a run only along the run-state table (spec 04, *Run states*), through
``POST /v1/runs/{id}/resume`` and the ORM store."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from editor.models import Run
from tests.integration.api.callers import Caller, bearer_caller
from tests.integration.api.running import ECHO_CHAIN, kinds_of, record, resume, start, store

pytestmark = pytest.mark.django_db

GATE_ITEM = {"node": "g", "scope": [["m", 0]]}
BUDGET_ITEM = {"node": "a", "scope": [["m", 1]]}


@pytest.fixture
def waiting_twice(api: Caller, operator: User) -> str:
    """A run parked at a gate (map item 0) and at an agent's budget (item 1), as a worker
    records a map whose items park at once: the gate's item is the older."""
    run_id = start(bearer_caller(operator), store(api, ECHO_CHAIN))
    record(run_id, ("NodeEntered", {"node": "m"}))
    record(
        run_id,
        (
            "Suspended",
            {**GATE_ITEM, "reason": "ok?", "input_schema": {"type": "string"}, "value": 1},
        ),
        ("BudgetExceeded", {**BUDGET_ITEM, "budget": {"kind": "steps", "limit": 1}, "observed": 1}),
    )
    assert Run.objects.get(pk=run_id).state == "suspended"
    return run_id


def test_resolving_the_gate_of_a_run_that_also_waits_for_a_budget_follows_the_table(
    waiting_twice: str, approver: User, operator: User
) -> None:
    """Found: the run moved from `suspended` straight to `budget_exceeded`."""
    approver_api = bearer_caller(approver)

    response = resume(approver_api, waiting_twice, {"input": "yes", **GATE_ITEM})

    assert response.status_code == 202, response.content
    # suspended → running (resolved) → budget_exceeded: the open budget item parks it again
    assert kinds_of(approver_api, waiting_twice)[-3:] == [
        "BudgetExceeded",
        "Resumed",
        "BudgetExceeded",
    ]
    run = Run.objects.get(pk=waiting_twice)
    assert run.state == "budget_exceeded"
    assert [item["node"] for item in run.status["pending"]] == ["a"]
    assert run.parked_at is not None

    raised = resume(bearer_caller(operator), waiting_twice, {"input": {"limit": 5}})
    assert raised.status_code == 202, raised.content
    assert Run.objects.get(pk=waiting_twice).state == "running"
