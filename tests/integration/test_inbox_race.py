"""Twenty approvers resolving one suspension at the same moment (issue: approval inbox).

Real threads with their own database connections, released together at a barrier. On
PostgreSQL (the second pass of ``.ci/run``) they truly write at once; on SQLite the app's
database file queues them. Either way exactly one resolution is recorded and exactly one
continuation is queued for a worker.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django_tasks_db.models import DBTaskResult

from editor.models import RunEvent
from tests.integration.api import test_concurrency
from tests.integration.api.callers import bearer_caller, make_user
from tests.integration.api.running import GATED, drive, start, store
from tests.integration.api.test_concurrency import together

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("race_database")]

APPROVERS = 20

race_database = test_concurrency.app_database


def queued_drives(run_id: str) -> int:
    return sum(
        1
        for args_kwargs in DBTaskResult.objects.filter(task_path__endswith="drive_run").values_list(
            "args_kwargs", flat=True
        )
        if run_id in (args_kwargs.get("args") or [])
    )


def test_twenty_approvers_resolving_one_gate_at_once_record_one_decision_and_one_continuation() -> (
    None
):
    author = bearer_caller(make_user("ada", "authors"))
    operator = bearer_caller(make_user("otto", "operators"))
    run_id = start(operator, store(author, GATED), input={"draft": "Tea is good."})
    assert drive(run_id) == "suspended"
    approvers: list[User] = [make_user(f"approver{n}", "approvers") for n in range(APPROVERS)]
    callers = [bearer_caller(approver) for approver in approvers]
    drives_before = queued_drives(run_id)

    responses = together(
        [
            lambda caller=caller: caller.post(
                f"/v1/runs/{run_id}/resume", {"input": {"approved": True}, "comment": "fine"}
            )
            for caller in callers
        ]
    )

    errors = [response for response in responses if isinstance(response, BaseException)]
    assert not errors, errors
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [202] + [409] * (APPROVERS - 1), [r.content for r in responses]
    [resumed] = RunEvent.objects.filter(run_id=run_id, kind="Resumed")
    assert resumed.payload["by"] in {approver.username for approver in approvers}
    assert queued_drives(run_id) - drives_before == 1
    assert drive(run_id) == "completed"
    assert RunEvent.objects.filter(run_id=run_id, kind="Resumed").count() == 1
