"""Resolving and abandoning runs: ``POST /v1/runs/{id}/resume`` and ``…/abandon`` (spec 04
*Suspension and resume*, spec 05 *Runs*), and runs driven to their end by the worker."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from editor.engine.errors import RunLost
from editor.models import Run
from editor.services import runs
from editor.services.errors import NotSuspended, RunBusy
from editor.services.runs import resolutions
from tests.integration.api.callers import Caller, bearer_caller, error_of, make_user
from tests.integration.api.running import (
    ECHO_CHAIN,
    GATED,
    drive,
    event_count,
    events_of,
    kinds_of,
    park,
    record,
    resume,
    run_of,
    start,
    store,
)

pytestmark = pytest.mark.django_db

APPROVED = {"input": {"approved": True, "note": "ship it"}}


@pytest.fixture
def operator_api(operator: User) -> Caller:
    return bearer_caller(operator)


@pytest.fixture
def approver_api(approver: User) -> Caller:
    return bearer_caller(approver)


@pytest.fixture
def suspended(api: Caller, operator_api: Caller) -> str:
    """A run of GATED, driven to its gate."""
    run_id = start(operator_api, store(api, GATED), input={"draft": "Tea is good."})
    assert drive(run_id) == "suspended"
    return run_id


@pytest.fixture
def queued(api: Caller, operator_api: Caller) -> str:
    return start(operator_api, store(api, ECHO_CHAIN))


# --- Driven to the end ------------------------------------------------------------------------


def test_a_run_driven_by_the_worker_completes_with_its_output(
    operator_api: Caller, queued: str
) -> None:
    assert drive(queued) == "completed"

    run = run_of(operator_api, queued)
    assert run["status"] == {"state": "completed", "output": None}
    assert kinds_of(operator_api, queued)[-1] == "RunCompleted"


@pytest.mark.django_db(transaction=True)
def test_a_started_run_is_driven_to_completion_by_db_worker(
    api: Caller, operator_api: Caller
) -> None:
    run_id = start(operator_api, store(api, ECHO_CHAIN), input={"topic": "tea"})

    call_command("db_worker", batch=True, no_startup_delay=True, reload=False)

    assert run_of(operator_api, run_id)["status"] == {
        "state": "completed",
        "output": {"topic": "tea"},
    }


@pytest.mark.django_db(transaction=True)
def test_a_resolved_gate_is_driven_on_by_db_worker(
    api: Caller, operator_api: Caller, approver_api: Caller
) -> None:
    run_id = start(operator_api, store(api, GATED), input={"draft": "Tea is good."})
    call_command("db_worker", batch=True, no_startup_delay=True, reload=False)
    assert run_of(operator_api, run_id)["status"]["state"] == "suspended"

    assert resume(approver_api, run_id, APPROVED).status_code == 202
    call_command("db_worker", batch=True, no_startup_delay=True, reload=False)

    assert run_of(operator_api, run_id)["status"] == {
        "state": "completed",
        "output": APPROVED["input"],
    }


# --- Gates ------------------------------------------------------------------------------------


def test_a_run_at_a_gate_is_suspended_with_the_gates_reason_and_schema(
    operator_api: Caller, suspended: str
) -> None:
    status = run_of(operator_api, suspended)["status"]

    assert status["state"] == "suspended"
    assert status["node"] == "review"
    assert status["reason"] == "Publish?"
    assert status["input_schema"]["required"] == ["approved"]
    assert "pending" not in status


def test_an_approver_resolves_a_gate_and_the_run_drives_on(
    approver: User, approver_api: Caller, operator_api: Caller, suspended: str
) -> None:
    response = resume(approver_api, suspended, {**APPROVED, "comment": "fine"})

    assert response.status_code == 202
    assert response.json() == {"run": suspended, "status": "running", "outcome": "driving"}
    resumed = events_of(operator_api, suspended)[-1]["event"]
    assert resumed["kind"] == "Resumed"
    assert resumed["payload"]["node"] == "review"
    assert resumed["payload"]["input"] == APPROVED["input"]
    assert resumed["payload"]["by"] == approver.username
    assert resumed["payload"]["comment"] == "fine"
    assert resumed["payload"]["schema_hash"].startswith("sha256:")
    assert run_of(operator_api, suspended)["status"] == {"state": "running"}

    assert drive(suspended) == "completed"
    assert run_of(operator_api, suspended)["status"] == {
        "state": "completed",
        "output": APPROVED["input"],
    }


def test_a_resolution_is_handed_to_a_worker_when_it_is_committed(
    approver_api: Caller, suspended: str, django_capture_on_commit_callbacks: Any
) -> None:
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.all().delete()
    with django_capture_on_commit_callbacks(execute=True):
        assert resume(approver_api, suspended, APPROVED).status_code == 202

    assert DBTaskResult.objects.get().args_kwargs["args"] == [suspended]


def test_an_input_that_breaks_the_schema_is_400_with_every_violation_and_records_nothing(
    approver_api: Caller, operator_api: Caller, suspended: str
) -> None:
    before = event_count(suspended)

    response = resume(approver_api, suspended, {"input": {"approved": "yes", "note": 3}})

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "approval_schema_violation"
    assert error["details"]["node"] == "review"
    violations = error["details"]["violations"]
    assert sorted(violation["path"] for violation in violations) == ["$.approved", "$.note"]
    assert all(violation["message"] for violation in violations)
    assert event_count(suspended) == before
    assert run_of(operator_api, suspended)["status"]["state"] == "suspended"


def test_a_missing_required_field_is_a_violation_at_the_root(
    approver_api: Caller, suspended: str
) -> None:
    response = resume(approver_api, suspended, {"input": {}})

    assert response.status_code == 400
    assert [v["path"] for v in error_of(response)["details"]["violations"]] == ["$"]


def test_a_resume_body_without_input_is_400_bad_request(
    approver_api: Caller, suspended: str
) -> None:
    before = event_count(suspended)

    response = resume(approver_api, suspended, {"comment": "no input"})

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"
    assert event_count(suspended) == before


def test_a_second_resolution_is_409_not_suspended_naming_who_resolved_it(
    approver: User, approver_api: Caller, operator_api: Caller, suspended: str
) -> None:
    first = resume(approver_api, suspended, APPROVED)
    resolved_at = events_of(operator_api, suspended)[-1]["recorded_at"]
    second = resume(bearer_caller(make_user("amos", "approvers")), suspended, APPROVED)

    assert first.status_code == 202
    assert second.status_code == 409
    error = error_of(second)
    assert error["code"] == "not_suspended"
    assert error["details"]["resolved_by"] == approver.username
    assert error["details"]["resolved_at"] == resolved_at
    assert kinds_of(operator_api, suspended).count("Resumed") == 1


def test_of_two_resolutions_racing_exactly_one_is_recorded(
    approver: User, monkeypatch: pytest.MonkeyPatch, suspended: str
) -> None:
    # The rival reads the same suspension, then resolves it between this resume's read and
    # its write: the database lets only the first write in.
    rival = make_user("amos", "approvers")
    prepare = resolutions.prepare_decision
    raced: list[bool] = []

    def prepare_then_lose_the_race(*args: Any, **kwargs: Any) -> Any:
        prepared = prepare(*args, **kwargs)
        if not raced:
            raced.append(True)
            runs.resume(rival, suspended, {"input": {"approved": False}})
        return prepared

    monkeypatch.setattr(resolutions, "prepare_decision", prepare_then_lose_the_race)

    with pytest.raises(NotSuspended) as lost:
        runs.resume(approver, suspended, APPROVED)

    assert lost.value.resolved_by == "amos"
    assert lost.value.details()["resolved_by"] == "amos"
    payloads = [
        envelope["event"]["payload"]
        for envelope in events_of(bearer_caller(approver), suspended)
        if envelope["event"]["kind"] == "Resumed"
    ]
    assert [payload["by"] for payload in payloads] == ["amos"]


def test_a_resume_of_a_run_that_is_not_parked_is_409_not_suspended(
    approver_api: Caller, queued: str
) -> None:
    response = resume(approver_api, queued, APPROVED)

    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "not_suspended"
    assert "resolved_by" not in error["details"]
    assert event_count(queued) == 1


@pytest.mark.parametrize("actor", ["operator", "author", "nobody"])
def test_only_approvers_may_resolve_a_gate(
    request: pytest.FixtureRequest, suspended: str, actor: str
) -> None:
    before = event_count(suspended)

    response = resume(bearer_caller(request.getfixturevalue(actor)), suspended, APPROVED)

    assert response.status_code == 403
    error = error_of(response)
    assert error["code"] == "not_an_approver"
    assert error["details"]["groups"] == ["approvers"]
    assert event_count(suspended) == before


def test_without_credentials_a_resume_is_401(anonymous: Caller, suspended: str) -> None:
    response = resume(anonymous, suspended, APPROVED)

    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthorized"


def test_a_resume_of_an_unknown_run_is_404_unknown_run(approver_api: Caller) -> None:
    response = resume(approver_api, "00000000-0000-0000-0000-000000000000", APPROVED)

    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown_run"


# --- Budgets and reconciliations ------------------------------------------------------------


def test_an_operator_raises_an_exceeded_budget(operator_api: Caller, queued: str) -> None:
    park(queued, "budget")
    assert run_of(operator_api, queued)["status"] == {
        "state": "budget_exceeded",
        "node": "write",
        "budget": {"kind": "steps", "limit": 2},
        "observed": 3,
    }

    response = resume(operator_api, queued, {"input": {"limit": 10}})

    assert response.status_code == 202
    raised = events_of(operator_api, queued)[-1]["event"]
    assert raised["kind"] == "BudgetRaised"
    assert raised["payload"]["limit"] == 10
    assert raised["payload"]["by"] == "otto"
    assert run_of(operator_api, queued)["status"] == {"state": "running"}


def test_a_budget_not_above_what_was_observed_is_400_with_a_violation(
    operator_api: Caller, queued: str
) -> None:
    park(queued, "budget")
    before = event_count(queued)

    response = resume(operator_api, queued, {"input": {"limit": 3}})

    assert response.status_code == 400
    assert [v["path"] for v in error_of(response)["details"]["violations"]] == ["$.limit"]
    assert event_count(queued) == before


def test_an_operator_records_a_writes_output_by_hand(operator_api: Caller, queued: str) -> None:
    park(queued, "reconciliation")
    assert run_of(operator_api, queued)["status"] == {
        "state": "needs_reconciliation",
        "node": "write",
        "tool": "http_request",
    }

    response = resume(operator_api, queued, {"input": {"output": {"status": 200}}})

    assert response.status_code == 202
    reconciled = events_of(operator_api, queued)[-1]["event"]
    assert reconciled["kind"] == "Reconciled"
    assert reconciled["payload"]["output"] == {"status": 200}


@pytest.mark.parametrize("kind", ["budget", "reconciliation"])
@pytest.mark.parametrize("actor", ["approver", "author"])
def test_only_operators_may_raise_budgets_and_reconcile(
    request: pytest.FixtureRequest, queued: str, kind: str, actor: str
) -> None:
    park(queued, kind)
    before = event_count(queued)
    body = {"input": {"limit": 10}} if kind == "budget" else {"input": {"retry": True}}

    response = resume(bearer_caller(request.getfixturevalue(actor)), queued, body)

    assert response.status_code == 403
    assert error_of(response)["code"] == "forbidden"
    assert event_count(queued) == before


# --- Abandoning -------------------------------------------------------------------------------


def test_an_operator_abandons_a_suspended_run_with_a_reason(
    operator_api: Caller, suspended: str
) -> None:
    response = operator_api.post(f"/v1/runs/{suspended}/abandon", {"reason": "wrong draft"})

    assert response.status_code == 200
    assert response.json() == {
        "run": suspended,
        "abandoned": True,
        "appended_seq": len(events_of(operator_api, suspended)) - 1,
        "status": {"state": "abandoned", "reason": "wrong draft"},
    }
    last = events_of(operator_api, suspended)[-1]["event"]
    assert last == {"kind": "RunAbandoned", "payload": {"by": "otto", "reason": "wrong draft"}}
    assert run_of(operator_api, suspended)["status"] == {
        "state": "abandoned",
        "reason": "wrong draft",
    }


@pytest.mark.parametrize("body", [b"", {}, {"reason": None}])
def test_a_run_is_abandoned_without_a_reason(operator_api: Caller, queued: str, body: Any) -> None:
    response = operator_api.post(f"/v1/runs/{queued}/abandon", body)

    assert response.status_code == 200, response.content
    assert response.json() == {
        "run": queued,
        "abandoned": True,
        "appended_seq": 1,
        "status": {"state": "abandoned"},
    }


def test_an_abandoned_run_is_not_driven(operator_api: Caller, queued: str) -> None:
    operator_api.post(f"/v1/runs/{queued}/abandon", {})

    drive(queued)

    assert kinds_of(operator_api, queued) == ["GraphRunStarted", "RunAbandoned"]


def test_abandoning_a_finished_run_is_409_wrong_state_already_finished(
    operator_api: Caller, queued: str
) -> None:
    drive(queued)
    before = event_count(queued)

    response = operator_api.post(f"/v1/runs/{queued}/abandon", {"reason": "late"})

    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "wrong_state"
    assert error["details"] == {"state": "completed", "reason": "already_finished"}
    assert event_count(queued) == before


def test_abandoning_twice_is_409_wrong_state(operator_api: Caller, queued: str) -> None:
    assert operator_api.post(f"/v1/runs/{queued}/abandon", {}).status_code == 200

    response = operator_api.post(f"/v1/runs/{queued}/abandon", {})

    assert response.status_code == 409
    assert error_of(response)["code"] == "wrong_state"
    assert error_of(response)["details"]["reason"] == "already_finished"


def test_a_resume_of_an_abandoned_run_is_409_not_suspended(
    operator_api: Caller, approver_api: Caller, suspended: str
) -> None:
    operator_api.post(f"/v1/runs/{suspended}/abandon", {})

    response = resume(approver_api, suspended, APPROVED)

    assert response.status_code == 409
    assert error_of(response)["code"] == "not_suspended"


def test_an_abandon_that_races_a_workers_step_is_recorded_after_it(
    operator: User, operator_api: Caller, monkeypatch: pytest.MonkeyPatch, queued: str
) -> None:
    prepare = resolutions.prepare_abandon
    calls: list[int] = []

    def prepare_while_the_worker_appends(*args: Any, **kwargs: Any) -> Any:
        prepared = prepare(*args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            record(queued, ("NodeEntered", {"node": "write"}))
        return prepared

    monkeypatch.setattr(resolutions, "prepare_abandon", prepare_while_the_worker_appends)

    outcome = runs.abandon(operator, queued, "stop")

    assert outcome.status == {"state": "abandoned", "reason": "stop"}
    assert len(calls) == 2
    assert kinds_of(operator_api, queued) == ["GraphRunStarted", "NodeEntered", "RunAbandoned"]


def test_an_abandon_that_keeps_losing_is_409_run_busy(
    operator: User, monkeypatch: pytest.MonkeyPatch, queued: str
) -> None:
    class AlwaysLost:
        def load_run(self, run_id: str) -> Any:
            from editor.store import OrmRunStore

            return OrmRunStore().load_run(run_id)

        def record(self, *args: Any) -> None:
            raise RunLost("someone else appended")

    monkeypatch.setattr(resolutions, "store", AlwaysLost)

    with pytest.raises(RunBusy):
        runs.abandon(operator, queued, None)
    assert Run.objects.get(pk=queued).state == "queued"


@pytest.mark.parametrize("actor", ["approver", "author", "nobody"])
def test_only_operators_may_abandon_runs(
    request: pytest.FixtureRequest, queued: str, actor: str
) -> None:
    response = bearer_caller(request.getfixturevalue(actor)).post(f"/v1/runs/{queued}/abandon", {})

    assert response.status_code == 403
    assert error_of(response)["code"] == "forbidden"
    assert event_count(queued) == 1


def test_without_credentials_an_abandon_is_401(anonymous: Caller, queued: str) -> None:
    response = anonymous.post(f"/v1/runs/{queued}/abandon", {})

    assert response.status_code == 401


def test_abandoning_an_unknown_run_is_404_unknown_run(operator_api: Caller) -> None:
    response = operator_api.post("/v1/runs/nope/abandon", {})

    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown_run"
