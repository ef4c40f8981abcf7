"""Helpers for the worker tests: storing a graph and starting a run of it, as the services do
(a queued ``Run`` row with its ``GraphRunStarted``), without a request or a user."""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction
from django.utils import timezone

from editor.engine import run_status, start_event
from editor.models import Run, RunEvent
from editor.services.documents.graphs import check_graph, save_graph
from editor.store import OrmRunStore

#: first (echo) → second (echo): completes on the built-in tools.
ECHO_CHAIN: dict[str, Any] = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "first", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "second", "tool": "echo"}},
    ],
    "edges": [{"from": "first", "to": "second"}],
}

#: write (echo) → review (gate: ``{"approved": bool}``) → publish (echo).
GATED: dict[str, Any] = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {
            "kind": "gate",
            "payload": {
                "id": "review",
                "approval_schema": {
                    "type": "object",
                    "properties": {"approved": {"type": "boolean"}},
                    "required": ["approved"],
                },
            },
        },
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "review"}, {"from": "review", "to": "publish"}],
}


def wide_map(concurrency: int, tool: str = "echo") -> dict[str, Any]:
    """``m``: a map over ``items`` asking for ``concurrency`` items at once, body ``each``
    (``tool``)."""
    return {
        "schema_version": 1,
        "nodes": [
            {
                "kind": "map",
                "payload": {
                    "id": "m",
                    "over": "items",
                    "concurrency": concurrency,
                    "body": {"kind": "node", "value": "each"},
                },
            },
            {"kind": "tool", "payload": {"id": "each", "tool": tool}},
        ],
        "edges": [],
    }


def one_tool(tool: str, *, then: str = "echo") -> dict[str, Any]:
    """``call`` (``tool``) → ``after`` (``then``)."""
    return {
        "schema_version": 1,
        "nodes": [
            {"kind": "tool", "payload": {"id": "call", "tool": tool}},
            {"kind": "tool", "payload": {"id": "after", "tool": then}},
        ],
        "edges": [{"from": "call", "to": "after"}],
    }


def stored(graph: dict[str, Any]) -> str:
    """Store ``graph``; its hash."""
    return save_graph(check_graph(json.dumps(graph))).graph


def start(graph: dict[str, Any], input: Any = None) -> str:
    """A queued run of ``graph`` on ``input``, logged as the services log it; its id."""
    return start_stored(stored(graph), input)


def start_stored(digest: str, input: Any = None) -> str:
    """A queued run of the stored graph ``digest``; its id."""
    with transaction.atomic():
        run = Run.objects.create(graph_id=digest, input=input)
        run_id = str(run.id)
        first = start_event(run_id, digest, input, None, timezone.now())
        OrmRunStore().record(run_id, [first], run_status([first]))
    return run_id


def kinds(run_id: str) -> list[str]:
    return list(
        RunEvent.objects.filter(run_id=run_id).order_by("seq").values_list("kind", flat=True)
    )


def state(run_id: str) -> str:
    return Run.objects.get(pk=run_id).state
