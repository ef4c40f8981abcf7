"""Values PostgreSQL cannot store, sent wherever a client's JSON or text reaches the database.

PostgreSQL refuses the NUL character (``\\u0000``) in ``jsonb`` and text columns, where SQLite
takes it; each of these is refused up front, on every database, with a clear 4xx or a message
beside the field, and nothing is recorded. CI runs this module on PostgreSQL too, where a value
that slipped through would be a 500.
"""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from editor.models import Run, RunEvent
from tests.integration.api.callers import bearer_caller, error_of, json_of
from tests.integration.api.running import ECHO_CHAIN, event_count
from tests.integration.inbox import frozen, gated, parked, waiting

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
NUL_JSON = '{"approved": true, "note": "a\\u0000b"}'


def browser(user: User) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def pending_seq(run_id: str) -> str:
    return str(Run.objects.get(pk=run_id).status["pending"][0]["seq"])


@pytest.mark.parametrize(
    "body",
    [
        {"input": {"approved": True, "note": "a\u0000b"}},
        {"input": {"approved": True, "a\u0000": 1}},
        {"input": {"approved": True}, "comment": "fine\u0000"},
    ],
    ids=["in a value", "in a key", "in the comment"],
)
def test_a_resume_holding_nul_is_a_bad_request(
    author: User, operator: User, approver: User, body: dict
) -> None:
    run_id = waiting(author, operator)
    before = event_count(run_id)

    response = bearer_caller(approver).post(f"/v1/runs/{run_id}/resume", body)

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "bad_request"
    assert "U+0000" in error["message"]
    assert event_count(run_id) == before


def test_an_abandon_reason_holding_nul_is_a_bad_request(author: User, operator: User) -> None:
    run_id = waiting(author, operator)
    before = event_count(run_id)

    response = bearer_caller(operator).post(
        f"/v1/runs/{run_id}/abandon", {"reason": "no\u0000thanks"}
    )

    assert response.status_code == 400
    assert "U+0000" in error_of(response)["message"]
    assert event_count(run_id) == before


def test_the_abandon_form_refuses_a_reason_holding_nul(author: User, operator: User) -> None:
    run_id = waiting(author, operator)
    before = event_count(run_id)

    response = browser(operator).post(f"/runs/{run_id}/abandon/", {"reason": "no\x00thanks"})

    assert response.status_code == 200
    assert "The reason cannot contain the NUL character (U+0000)." in response.content.decode()
    assert event_count(run_id) == before


def test_the_inbox_json_fallback_refuses_nul_beside_the_field(
    author: User, operator: User, approver: User
) -> None:
    run_id = waiting(author, operator, gated(schema={"type": "object"}))
    before = event_count(run_id)

    response = browser(approver).post(
        f"/inbox/{run_id}/resolve/",
        {"node": "review", "seq": pending_seq(run_id), "approval-json": NUL_JSON},
        headers=HTMX,
    )

    assert response.status_code == 200
    assert "This cannot contain the NUL character (U+0000)." in response.content.decode()
    assert event_count(run_id) == before


@pytest.mark.parametrize(
    "fields",
    [{"field-note": "a\x00b"}, {"comment": "a\x00b"}],
    ids=["a text field", "the comment"],
)
def test_a_card_refuses_nul_typed_into_a_field(
    author: User, operator: User, approver: User, fields: dict[str, str]
) -> None:
    run_id = waiting(author, operator)
    before = event_count(run_id)

    response = browser(approver).post(
        f"/inbox/{run_id}/resolve/",
        {"node": "review", "seq": pending_seq(run_id), "field-approved": "true", **fields},
        headers=HTMX,
    )

    assert response.status_code == 200
    assert "U+0000" in response.content.decode()
    assert event_count(run_id) == before


def test_record_output_refuses_nul(author: User, operator: User) -> None:
    run_id = parked(author, operator, "reconciliation")
    before = event_count(run_id)

    response = browser(operator).post(
        f"/inbox/{run_id}/resolve/", {"node": "write", "output": '"a\\u0000"'}, headers=HTMX
    )

    assert response.status_code == 200
    assert "U+0000" in response.content.decode()
    assert event_count(run_id) == before


def test_the_start_run_page_refuses_an_input_holding_nul(author: User, operator: User) -> None:
    _slug, digest = frozen(author, ECHO_CHAIN)

    response = browser(operator).post(
        f"/g/{digest.removeprefix('sha256:')}/runs/", {"input": json.dumps({"text": "a\u0000"})}
    )

    assert response.status_code == 200
    assert "U+0000" in response.content.decode()
    assert not Run.objects.exists() and not RunEvent.objects.exists()


def test_the_start_api_refuses_an_input_holding_nul(author: User, operator: User) -> None:
    _slug, digest = frozen(author, ECHO_CHAIN)

    response = bearer_caller(operator).post(
        "/v1/graph-runs", {"graph_hash": digest, "input": {"text": "a\u0000"}}
    )

    assert response.status_code == 400
    assert "U+0000" in error_of(response)["message"]
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    "path",
    ["/runs/?graph=a%00b", "/runs/?document=a%00b&label=k%00", "/inbox/?graph=a%00b", "/?q=a%00b"],
)
def test_a_page_filter_holding_nul_finds_nothing(author: User, operator: User, path: str) -> None:
    waiting(author, operator)

    response = browser(operator).get(path)

    assert response.status_code == 200


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/v1/runs?graph=a%00b", "runs"),
        ("/v1/runs?document=a%00b", "runs"),
        ("/v1/runs?person=a%00b&label=a%00", "runs"),
        ("/v1/inbox?document=a%00b", "items"),
    ],
)
def test_an_api_filter_holding_nul_finds_nothing(
    author: User, operator: User, path: str, key: str
) -> None:
    waiting(author, operator)

    response = bearer_caller(operator).get(path)

    assert response.status_code == 200
    assert json_of(response)[key] == []


# --- The start input's own cap -----------------------------------------------------------------


def test_an_input_over_the_event_cap_is_refused_when_the_run_starts(
    author: User, operator: User, settings: Settings
) -> None:
    settings.GATEHOUSE_EVENT_MAX_BYTES = 2000
    _slug, digest = frozen(author, ECHO_CHAIN)

    response = bearer_caller(operator).post(
        "/v1/graph-runs", {"graph_hash": digest, "input": {"text": "x" * 3000}}
    )

    assert response.status_code == 413
    error = error_of(response)
    assert error["code"] == "payload_too_large"
    assert "2000 bytes" in error["message"] and "GATEHOUSE_EVENT_MAX_BYTES" in error["message"]
    assert error["details"]["field"] == "input" and error["details"]["limit"] == 2000
    assert not Run.objects.exists() and not RunEvent.objects.exists()


def test_an_input_within_the_event_cap_starts(
    author: User, operator: User, settings: Settings
) -> None:
    settings.GATEHOUSE_EVENT_MAX_BYTES = 2000
    _slug, digest = frozen(author, ECHO_CHAIN)

    response = bearer_caller(operator).post(
        "/v1/graph-runs", {"graph_hash": digest, "input": {"text": "x" * 1800}}
    )

    assert response.status_code == 201


def test_the_start_run_page_refuses_an_input_over_the_event_cap_beside_the_field(
    author: User, operator: User, settings: Settings
) -> None:
    settings.GATEHOUSE_EVENT_MAX_BYTES = 2000
    _slug, digest = frozen(author, ECHO_CHAIN)

    response = browser(operator).post(
        f"/g/{digest.removeprefix('sha256:')}/runs/", {"input": json.dumps({"text": "x" * 3000})}
    )

    assert response.status_code == 200
    assert "2000 bytes" in response.content.decode()
    assert not Run.objects.exists()
