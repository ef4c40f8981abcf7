"""The run endpoints in the reference's shapes (spec 05): the run object's totals, ``/replay``,
``/resolve``, the budget's ``extend``, a resume without ``input``, and the parts of the
reference's API that are not offered here."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django_tasks_db.models import DBTaskResult

from tests.integration.api.callers import Caller, bearer_caller, error_of
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


@pytest.fixture
def operator_api(operator: User) -> Caller:
    return bearer_caller(operator)


@pytest.fixture
def approver_api(approver: User) -> Caller:
    return bearer_caller(approver)


@pytest.fixture
def queued(api: Caller, operator_api: Caller) -> str:
    return start(operator_api, store(api, ECHO_CHAIN))


@pytest.fixture
def suspended(api: Caller, operator_api: Caller) -> str:
    run_id = start(operator_api, store(api, GATED), input={"draft": "Tea is good."})
    assert drive(run_id) == "suspended"
    return run_id


# --- The run object and /replay ---------------------------------------------------------------


def test_a_run_counts_its_model_calls_and_their_tokens_and_shows_the_call_in_flight(
    operator_api: Caller, queued: str
) -> None:
    record(
        queued,
        ("NodeEntered", {"node": "write"}),
        ("ModelCallRequested", {"node": "write", "model": "echo", "call": 0}),
        (
            "ModelCallCompleted",
            {"node": "write", "call": 0, "usage": {"input_tokens": 7, "output_tokens": 3}},
        ),
        ("ModelCallRequested", {"node": "write", "model": "echo", "call": 1}),
    )

    run = run_of(operator_api, queued)

    assert run["usage"] == {"input_tokens": 7, "output_tokens": 3}
    assert run["step_count"] == 2
    assert run["pending"] == {"kind": "model", "seq": 4, "node": "write", "model": "echo"}
    assert run["last_recorded_at"] == events_of(operator_api, queued)[-1]["recorded_at"]
    listed = operator_api.get("/v1/runs?limit=1").json()["runs"][0]
    assert listed["usage"] == run["usage"] and listed["step_count"] == 2
    assert "pending" not in listed  # a list row leaves the log unread, as the reference's does


def test_a_run_held_by_a_worker_has_a_driver_and_a_finished_one_none(
    operator_api: Caller, queued: str
) -> None:
    from editor.store import OrmRunStore

    holder = OrmRunStore("a-worker")
    holder.claim(queued)
    assert run_of(operator_api, queued)["driver"] == "attached"
    holder.release(queued)
    assert run_of(operator_api, queued)["driver"] == "none"

    drive(queued)

    assert run_of(operator_api, queued)["driver"] is None


def test_replay_folds_the_log_executing_nothing(operator_api: Caller, suspended: str) -> None:
    before = kinds_of(operator_api, suspended)

    response = operator_api.get(f"/v1/runs/{suspended}/replay")

    assert response.status_code == 200
    body = response.json()
    assert body == {
        "status": run_of(operator_api, suspended)["status"],
        "next_seq": len(before),
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
    assert kinds_of(operator_api, suspended) == before


def test_replay_shows_the_write_a_run_waits_to_have_reconciled(
    operator_api: Caller, queued: str
) -> None:
    record(
        queued,
        ("NodeEntered", {"node": "write"}),
        (
            "ToolCallRequested",
            {
                "node": "write",
                "tool": "http_request",
                "input": {"url": "http://example.test/"},
                "effect": "write",
                "idempotency_key": "sha256:" + "1" * 64,
                "call": 0,
            },
        ),
    )
    park(queued, "reconciliation")

    body = operator_api.get(f"/v1/runs/{queued}/replay").json()

    assert body["status"]["state"] == "needs_reconciliation"
    assert body["pending"] == {
        "kind": "tool",
        "seq": 2,
        "node": "write",
        "tool": "http_request",
        "input": {"url": "http://example.test/"},
        "effect": "write",
        "idempotency_key": "sha256:" + "1" * 64,
    }


def test_replay_of_an_unknown_run_is_404(operator_api: Caller) -> None:
    response = operator_api.get("/v1/runs/00000000-0000-0000-0000-000000000000/replay")

    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown_run"


# --- /resolve -----------------------------------------------------------------------------------


def test_resolve_records_the_cut_off_writes_output_and_hands_the_run_to_a_worker(
    operator_api: Caller, queued: str, django_capture_on_commit_callbacks: Any
) -> None:
    park(queued, "reconciliation")

    with django_capture_on_commit_callbacks(execute=True):
        response = operator_api.post(f"/v1/runs/{queued}/resolve", {"output": {"status": 201}})

    assert response.status_code == 200
    assert response.json() == {"run": queued, "resolved": True, "status": {"state": "running"}}
    last = events_of(operator_api, queued)[-1]["event"]
    assert last["kind"] == "Reconciled"
    assert last["payload"]["output"] == {"status": 201} and last["payload"]["by"] == "otto"
    assert DBTaskResult.objects.filter(args_kwargs__args=[queued]).exists()


@pytest.mark.parametrize("output", [None, 0, "done"])
def test_resolve_takes_any_json_value_as_the_output(
    operator_api: Caller, queued: str, output: Any
) -> None:
    park(queued, "reconciliation")

    response = operator_api.post(f"/v1/runs/{queued}/resolve", {"output": output})

    assert response.status_code == 200
    assert events_of(operator_api, queued)[-1]["event"]["payload"]["output"] == output


@pytest.mark.parametrize("run", ["queued", "suspended"])
def test_resolving_a_run_without_a_cut_off_write_is_409_wrong_state_and_records_nothing(
    request: pytest.FixtureRequest, operator_api: Caller, run: str
) -> None:
    run_id = request.getfixturevalue(run)
    before = event_count(run_id)

    response = operator_api.post(f"/v1/runs/{run_id}/resolve", {"output": 1})

    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "wrong_state"
    assert "no write to resolve" in error["message"]
    assert event_count(run_id) == before


def test_resolve_needs_an_output_and_an_operator(
    operator_api: Caller, approver_api: Caller, queued: str
) -> None:
    park(queued, "reconciliation")
    before = event_count(queued)

    missing = operator_api.post(f"/v1/runs/{queued}/resolve", {})
    approver = approver_api.post(f"/v1/runs/{queued}/resolve", {"output": 1})

    assert missing.status_code == 400 and error_of(missing)["code"] == "bad_request"
    assert approver.status_code == 403 and error_of(approver)["code"] == "forbidden"
    assert event_count(queued) == before


# --- Budgets, and a resume without input -----------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [{"input": {"extend": {"steps": 5}}}, {"extend": {"steps": 5}}, {"input": {"limit": 5}}],
)
def test_a_budget_is_raised_with_the_references_extend_or_our_limit(
    operator_api: Caller, queued: str, body: dict[str, Any]
) -> None:
    park(queued, "budget")

    response = resume(operator_api, queued, body)

    assert response.status_code == 202, response.content
    last = events_of(operator_api, queued)[-1]["event"]
    assert last["kind"] == "BudgetRaised"
    assert last["payload"]["kind"] == "steps" and last["payload"]["limit"] == 5


@pytest.mark.parametrize(
    ("extend", "path", "words"),
    [
        ({"tokens": 5}, "$.extend.tokens", "must name `steps`"),
        ({"cost_usd": 5}, "$.extend.cost_usd", "must name `steps`"),
        ({"wall_time_seconds": 5}, "$.extend.wall_time_seconds", "must name `steps`"),
        ({"dollars": 5}, "$.extend.dollars", "not a budget here"),
        ({"steps": 5, "tokens": 9}, "$.extend", '"steps": <the new limit>'),
        ({"steps": 2}, "$.limit", "above what was observed (3)"),
    ],
)
def test_a_wrong_extension_is_400_naming_the_budget_and_records_nothing(
    operator_api: Caller, queued: str, extend: dict[str, Any], path: str, words: str
) -> None:
    park(queued, "budget")
    before = event_count(queued)

    response = resume(operator_api, queued, {"input": {"extend": extend}})

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "bad_request"
    assert error["details"]["node"] == "write"
    (violation,) = error["details"]["violations"]
    assert violation["path"] == path and words in violation["message"]
    assert event_count(queued) == before


def test_a_resume_without_input_of_a_parked_run_is_400(
    approver_api: Caller, suspended: str
) -> None:
    before = event_count(suspended)

    response = resume(approver_api, suspended, {})

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "bad_request"
    assert "needs an `input`" in error["message"]
    assert event_count(suspended) == before


def test_a_resume_without_input_hands_a_running_run_to_a_worker_again(
    operator_api: Caller, queued: str, django_capture_on_commit_callbacks: Any
) -> None:
    DBTaskResult.objects.all().delete()

    with django_capture_on_commit_callbacks(execute=True):
        response = resume(operator_api, queued, {})

    assert response.status_code == 202
    assert response.json() == {"run": queued, "status": "running", "outcome": "driving"}
    assert DBTaskResult.objects.get().args_kwargs["args"] == [queued]
    assert drive(queued) == "completed"


def test_only_operators_may_hand_a_run_to_a_worker_again(approver_api: Caller, queued: str) -> None:
    response = resume(approver_api, queued, {})

    assert response.status_code == 403


# --- What is not offered ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "words"),
    [
        ("post", "/v1/client-runs", "client-driven runs (`/v1/client-runs`) are not offered"),
        ("get", "/v1/client-runs/x/log", "client-driven runs"),
        ("post", "/v1/client-runs/x/events", "client-driven runs"),
        ("get", "/v1/client-tools", "client-performed tools (`/v1/client-tools`) are not"),
    ],
)
def test_the_parts_of_the_reference_not_offered_say_so(
    operator_api: Caller, method: str, path: str, words: str
) -> None:
    body = {"agent": "sha256:" + "0" * 64} if method == "post" else None
    response = operator_api.request(method, path, body)

    assert response.status_code == 404
    error = error_of(response)
    assert error["code"] == "not_offered"
    assert words in error["message"]
