"""Runs a tool parked on a signal wait (spec 08, section 5): nobody's task in the inbox, listed
for operators as **Waiting on a system**, resumed by an operator through the API."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.integration.api.callers import Caller, bearer_caller, error_of, json_of
from tests.integration.api.running import drive, record, resume, run_of, start, store

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "ask", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "after", "tool": "echo"}},
    ],
    "edges": [{"from": "ask", "to": "after"}],
}
SCHEMA = {"type": "object", "required": ["paid"]}


@pytest.fixture
def operator_api(operator: User) -> Caller:
    return bearer_caller(operator)


@pytest.fixture
def approver_api(approver: User) -> Caller:
    return bearer_caller(approver)


def parked(api: Caller, operator_api: Caller, *, signal: bool) -> str:
    """A run whose first tool answered with a suspend request, recorded as the engine does."""
    suspend: dict[str, Any] = {"reason": "Waiting for the bank", "input_schema": SCHEMA}
    if signal:
        suspend["kind"] = "signal"
    run_id = start(operator_api, store(api, DOCUMENT), input={"id": 7})
    record(run_id, ("NodeEntered", {"node": "ask"}))
    output = {"content": [], "isError": False, "_meta": {"salvor": {"suspend": suspend}}}
    record(
        run_id,
        ("ToolCallRequested", {"node": "ask", "tool": "echo", "input": {"id": 7}, "call": 0,
                               "effect": "read", "idempotency_key": "k"}),
        ("ToolCallCompleted", {"node": "ask", "tool": "echo", "output": output, "call": 0}),
        ("Suspended", {"node": "ask", **{k: v for k, v in suspend.items() if k != "kind"},
                       **({"kind": "signal"} if signal else {})}),
    )  # fmt: skip
    return run_id


def test_a_signal_wait_says_kind_signal_and_is_not_in_the_inbox(
    api: Caller, operator_api: Caller
) -> None:
    run_id = parked(api, operator_api, signal=True)

    status = run_of(operator_api, run_id)["status"]
    assert (status["state"], status["kind"], status["node"]) == ("suspended", "signal", "ask")
    assert status["reason"] == "Waiting for the bank"
    assert run_id not in json.dumps(json_of(operator_api.get("/v1/inbox")))


def test_a_suspension_without_kind_is_a_gate_card_in_the_inbox(
    api: Caller, operator_api: Caller
) -> None:
    run_id = parked(api, operator_api, signal=False)

    assert "kind" not in run_of(operator_api, run_id)["status"]
    assert run_id in json.dumps(json_of(operator_api.get("/v1/inbox")))
    waiting = json_of(operator_api.get("/v1/runs?status=suspended&kind=signal"))
    assert waiting["runs"] == []


def test_runs_waiting_on_a_system_are_listed_by_kind_signal(
    api: Caller, operator_api: Caller
) -> None:
    signal = parked(api, operator_api, signal=True)
    parked(api, operator_api, signal=False)

    listed = json_of(operator_api.get("/v1/runs?status=suspended&kind=signal"))
    assert [item["run"] for item in listed["runs"]] == [signal]
    alone = json_of(operator_api.get("/v1/runs?kind=signal"))
    assert [item["run"] for item in alone["runs"]] == [signal]


def test_an_unknown_kind_filter_is_400_naming_it(operator_api: Caller) -> None:
    response = operator_api.get("/v1/runs?kind=gate")
    assert response.status_code == 400
    assert "`kind` must be `signal`" in error_of(response)["message"]


def test_an_operator_resumes_a_signal_wait_and_an_approver_may_not(
    api: Caller, operator_api: Caller, approver_api: Caller
) -> None:
    run_id = parked(api, operator_api, signal=True)

    refused = resume(approver_api, run_id, {"input": {"paid": True}})
    assert refused.status_code == 403
    invalid = resume(operator_api, run_id, {"input": {"nope": 1}})
    assert invalid.status_code == 400
    accepted = resume(operator_api, run_id, {"input": {"paid": True}})
    assert accepted.status_code == 202, accepted.content

    drive(run_id)
    status = run_of(operator_api, run_id)["status"]
    assert status == {"state": "completed", "output": {"paid": True}}


def test_the_runs_page_links_to_the_runs_waiting_on_a_system(
    api: Caller, operator_api: Caller, client: Client, operator: User
) -> None:
    client.force_login(operator)
    signal = parked(api, operator_api, signal=True)
    gate = parked(api, operator_api, signal=False)

    page = client.get("/runs/")
    assert 'href="/runs/?state=suspended&amp;kind=signal">Waiting on a system' in page.text
    filtered = client.get("/runs/?state=suspended&kind=signal").text
    assert signal in filtered
    assert gate not in filtered
