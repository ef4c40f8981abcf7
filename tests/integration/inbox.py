"""Helpers for the inbox tests: runs that wait at a gate, a budget or a lost write."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import User

from editor.services import documents, runs
from tests.integration.api.callers import bearer_caller
from tests.integration.api.running import APPROVAL_SCHEMA, drive, park, store

HOSTILE = "<img src=x onerror=alert(1)>"


def gated(
    *,
    prompt: str = "Publish?",
    schema: Any = APPROVAL_SCHEMA,
    name: str | None = None,
    publish: str = "publish",
) -> dict[str, Any]:
    """write (echo) → review (gate) → publish (echo): the gate sees the run's input."""
    gate: dict[str, Any] = {"id": "review", "prompt": prompt, "approval_schema": schema}
    if name is not None:
        gate["name"] = name
    return {
        "schema_version": 1,
        "nodes": [
            {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
            {"kind": "gate", "payload": gate},
            {"kind": "tool", "payload": {"id": publish, "tool": "echo"}},
        ],
        "edges": [{"from": "write", "to": "review"}, {"from": "review", "to": publish}],
    }


def frozen(author: User, graph: dict[str, Any], title: str = "Release notes") -> tuple[str, str]:
    """A document holding ``graph``, frozen as its version 1: (slug, graph hash)."""
    created = documents.create_document(author, title=title, text=json.dumps(graph))
    version = documents.freeze(author, created.slug, expected_revision=1)
    return created.slug, version.graph


def waiting(
    author: User,
    operator: User,
    graph: dict[str, Any] | None = None,
    *,
    input: Any = None,
    document: str | None = None,
    graph_hash: str | None = None,
) -> str:
    """A run that waits at its gate: its id."""
    digest = graph_hash or store(bearer_caller(author), graph or gated())
    run = runs.start_run(operator, digest, input, document_slug=document)
    assert drive(run.run) == "suspended"
    return run.run


def parked(author: User, operator: User, kind: str) -> str:
    """A run parked in ``budget_exceeded`` (``kind="budget"``) or ``needs_reconciliation``."""
    digest = store(bearer_caller(author), gated())
    run = runs.start_run(operator, digest, None)
    park(run.run, kind)
    return run.run
