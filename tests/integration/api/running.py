"""Helpers for the runs tests: graphs that run here, starting runs, and driving them.

Runs are driven in-process by the worker's own task function (``drive_run.call``), so a test
sees exactly what a worker would record, without a worker process or a sleep. Parking a run in
``budget_exceeded`` or ``needs_reconciliation`` needs an agent or a lost write; :func:`park`
records those events directly, as the engine would, through the store.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse

from editor.engine.ports import Envelope
from editor.engine.status import run_status
from editor.models import Run
from editor.store import OrmRunStore
from editor.tasks import drive_run
from tests.integration.api.callers import Caller

ZERO_HASH = "sha256:" + "0" * 64

#: write (echo) → publish (echo): runs to completion on the built-ins.
ECHO_CHAIN = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "publish"}],
}

#: ask (echo) → pick (branch: `big` when n > 10, else `small`) → big (echo) | small (echo).
BRANCHING = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "ask", "tool": "echo"}},
        {
            "kind": "branch",
            "payload": {
                "id": "pick",
                "cases": [
                    {"name": "big", "when": {"kind": "expression", "value": "n > 10"}},
                    {"name": "small", "when": {"kind": "expression", "value": "true"}},
                ],
            },
        },
        {"kind": "tool", "payload": {"id": "big", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "small", "tool": "echo"}},
    ],
    "edges": [
        {"from": "ask", "to": "pick"},
        {"from": "pick", "to": "big", "label": "big"},
        {"from": "pick", "to": "small", "label": "small"},
    ],
}

APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "note": {"type": "string"}},
    "required": ["approved"],
}

#: write (echo) → review (gate) → publish (echo).
GATED = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {
            "kind": "gate",
            "payload": {"id": "review", "prompt": "Publish?", "approval_schema": APPROVAL_SCHEMA},
        },
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "review"}, {"from": "review", "to": "publish"}],
}

#: Valid, but names two tools no installation registers.
UNKNOWN_TOOLS = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "first", "tool": "ecko"}},
        {"kind": "tool", "payload": {"id": "second", "tool": "no_such_tool"}},
    ],
    "edges": [{"from": "first", "to": "second"}],
}

#: Valid, but its agent is not stored here; then a tool that is not registered either.
UNKNOWN_AGENT = {
    "schema_version": 1,
    "nodes": [
        {"kind": "agent", "payload": {"id": "research", "agent_hash": ZERO_HASH}},
        {"kind": "tool", "payload": {"id": "second", "tool": "no_such_tool"}},
    ],
    "edges": [{"from": "research", "to": "second"}],
}


def store(author_api: Caller, graph: dict[str, Any]) -> str:
    """Store ``graph`` as an author; its hash."""
    response = author_api.post("/v1/graphs", graph)
    assert response.status_code == 201, response.content
    return response.json()["graph"]


def start(operator_api: Caller, graph_hash: str, **body: Any) -> str:
    """Start a run as an operator; its id."""
    response = operator_api.post("/v1/graph-runs", {"graph_hash": graph_hash, **body})
    assert response.status_code == 201, response.content
    return response.json()["run"]


def drive(run_id: str) -> str | None:
    """Drive the run as a worker would, until it parks or ends; the state it left it in."""
    return drive_run.call(run_id)


def run_of(caller: Caller, run_id: str) -> dict[str, Any]:
    response = caller.get(f"/v1/runs/{run_id}")
    assert response.status_code == 200, response.content
    return response.json()


def events_of(caller: Caller, run_id: str) -> list[dict[str, Any]]:
    response = caller.get(f"/v1/runs/{run_id}/events")
    assert response.status_code == 200, response.content
    return response.json()["events"]


def kinds_of(caller: Caller, run_id: str) -> list[str]:
    return [envelope["event"]["kind"] for envelope in events_of(caller, run_id)]


def resume(caller: Caller, run_id: str, body: Any) -> HttpResponse:
    return caller.post(f"/v1/runs/{run_id}/resume", body)


def record(run_id: str, *events: tuple[str, dict[str, Any]]) -> None:
    """Append events to a run's log through the store, with the status they lead to."""
    run_store = OrmRunStore()
    existing = run_store.load_run(run_id).events
    start_at = len(existing)
    envelopes = [
        Envelope(run_id, start_at + offset, f"2026-01-01T00:00:{offset:02d}.000000Z", kind, payload)
        for offset, (kind, payload) in enumerate(events)
    ]
    run_store.record(run_id, envelopes, run_status([*existing, *envelopes]))


def park(run_id: str, kind: str) -> None:
    """Park a started run as the engine would: ``budget`` or ``reconciliation``."""
    if kind == "budget":
        parking = (
            "BudgetExceeded",
            {"node": "write", "budget": {"kind": "steps", "limit": 2}, "observed": 3},
        )
    else:
        parking = (
            "ReconciliationNeeded",
            {
                "node": "write",
                "tool": "http_request",
                "call": 0,
                "input": {"url": "http://example.test/"},
                "idempotency_key": "sha256:" + "1" * 64,
            },
        )
    # Two appends, as a worker makes them: the run is running before it parks.
    record(run_id, ("NodeEntered", {"node": "write"}))
    record(run_id, parking)


def event_count(run_id: str) -> int:
    return Run.objects.get(pk=run_id).event_count
