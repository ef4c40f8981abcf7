"""Runs a tool parked on a signal wait (spec 08, section 5): nobody's task in the inbox, listed
for operators as **Waiting on a system**, resumed by an operator through the API."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from tests.integration.api.callers import Caller, bearer_caller, error_of, json_of
from tests.integration.api.running import (
    drive,
    events_of,
    record,
    resume,
    run_of,
    start,
    store,
)

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


def signal_seq(run_id: str, operator_api: Caller) -> int:
    (item,) = [e for e in events_of(operator_api, run_id) if e["event"]["kind"] == "Suspended"]
    return int(item["seq"])


def test_the_run_page_says_a_signal_wait_waits_on_a_system_with_its_reason_and_schema(
    api: Caller, operator_api: Caller, client: Client, approver: User
) -> None:
    run_id = parked(api, operator_api, signal=True)
    client.force_login(approver)

    page = client.get(f"/runs/{run_id}/").content.decode()

    assert "Waiting on a system" in page
    assert "Waiting for a person" not in page
    assert "/inbox/" not in page.split('id="run-live"')[1].split("</section>")[0]  # no card
    assert "waits for: Waiting for the bank" in page
    assert "&quot;required&quot;: [" in page and "&quot;paid&quot;" in page  # the schema
    assert f"POST /v1/runs/{run_id}/resume" in page
    # An approver (no operator) reads it and gets no form.
    assert f'action="/runs/{run_id}/signal/"' not in page
    assert "an operator may send the input from this page" in page


def test_a_gate_suspension_still_links_to_its_inbox_card(
    api: Caller, operator_api: Caller, client: Client, operator: User
) -> None:
    run_id = parked(api, operator_api, signal=False)
    client.force_login(operator)

    page = client.get(f"/runs/{run_id}/").content.decode()

    assert "Waiting for a person" in page
    assert f"/inbox/?run={run_id}#card-" in page
    assert "Waiting on a system" not in page


def test_an_operator_resumes_a_signal_wait_on_the_run_page(
    api: Caller, operator_api: Caller, client: Client, operator: User
) -> None:
    run_id = parked(api, operator_api, signal=True)
    seq = signal_seq(run_id, operator_api)
    client.force_login(operator)
    page = client.get(f"/runs/{run_id}/").content.decode()
    assert f'action="/runs/{run_id}/signal/"' in page

    response = client.post(f"/runs/{run_id}/signal/", {"seq": seq, "input": '{"paid": true}'})

    assert response.status_code == 302
    assert response["Location"] == f"/runs/{run_id}/"
    resumed = [e for e in events_of(operator_api, run_id) if e["event"]["kind"] == "Resumed"]
    assert [e["event"]["payload"]["input"] for e in resumed] == [{"paid": True}]
    assert resumed[0]["event"]["payload"]["by"] == operator.get_username()
    drive(run_id)
    assert run_of(operator_api, run_id)["status"] == {
        "state": "completed",
        "output": {"paid": True},
    }


@pytest.mark.parametrize(
    ("typed", "shown"),
    [
        ('{"nope": 1}', "$: &#x27;paid&#x27; is a required property"),
        ("{paid: true", "This is not valid JSON"),
    ],
)
def test_an_input_the_schema_refuses_is_shown_beside_the_field_and_nothing_is_recorded(
    api: Caller,
    operator_api: Caller,
    client: Client,
    operator: User,
    typed: str,
    shown: str,
) -> None:
    run_id = parked(api, operator_api, signal=True)
    seq = signal_seq(run_id, operator_api)
    before = len(events_of(operator_api, run_id))
    client.force_login(operator)

    response = client.post(f"/runs/{run_id}/signal/", {"seq": seq, "input": typed})

    assert response.status_code == 400
    page = response.content.decode()
    assert shown in page
    assert 'aria-invalid="true"' in page
    assert escape(typed) in page  # what was typed is kept
    assert len(events_of(operator_api, run_id)) == before
    assert run_of(operator_api, run_id)["status"]["state"] == "suspended"


def test_a_non_operator_sees_no_form_and_their_post_is_refused(
    api: Caller, operator_api: Caller, client: Client, approver: User, author: User
) -> None:
    run_id = parked(api, operator_api, signal=True)
    seq = signal_seq(run_id, operator_api)
    before = len(events_of(operator_api, run_id))

    for user in (approver, author):
        client.force_login(user)
        response = client.post(f"/runs/{run_id}/signal/", {"seq": seq, "input": '{"paid": true}'})
        assert response.status_code == 403

    assert len(events_of(operator_api, run_id)) == before
    client.logout()
    anonymous = client.post(f"/runs/{run_id}/signal/", {"seq": seq, "input": '{"paid": true}'})
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert len(events_of(operator_api, run_id)) == before


def test_the_signal_form_resolves_only_a_signal_wait_and_only_once(
    api: Caller, operator_api: Caller, client: Client, operator: User
) -> None:
    gate = parked(api, operator_api, signal=False)
    signal = parked(api, operator_api, signal=True)
    client.force_login(operator)

    at_gate = client.post(
        f"/runs/{gate}/signal/", {"seq": signal_seq(gate, operator_api), "input": "{}"}
    )
    assert at_gate.status_code == 409
    assert "no longer waits on a system" in at_gate.content.decode()
    assert run_of(operator_api, gate)["status"]["state"] == "suspended"

    seq = signal_seq(signal, operator_api)
    first = client.post(f"/runs/{signal}/signal/", {"seq": seq, "input": '{"paid": true}'})
    second = client.post(f"/runs/{signal}/signal/", {"seq": seq, "input": '{"paid": false}'})
    assert first.status_code == 302
    assert second.status_code == 409
    resumed = [e for e in events_of(operator_api, signal) if e["event"]["kind"] == "Resumed"]
    assert len(resumed) == 1


def test_a_crafted_seq_is_400_naming_it(
    api: Caller, operator_api: Caller, client: Client, operator: User
) -> None:
    run_id = parked(api, operator_api, signal=True)
    client.force_login(operator)

    response = client.post(f"/runs/{run_id}/signal/", {"seq": "x1", "input": "{}"})

    assert response.status_code == 400
    assert "seq" in response.content.decode()
