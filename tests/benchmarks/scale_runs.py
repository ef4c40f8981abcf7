"""The runs of the scale benchmark's installation (``scale_seed.py``): one run of each kind
recorded for real (driven by the worker's own task, or resolved, abandoned and failed through
the services), its log then copied onto the other runs with their own ids, times, graphs and
labels; and one real run of a map over items with 5,000 events."""

from __future__ import annotations

import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone
from scale_seed import (  # this folder
    APPROVERS,
    CORE,
    OPERATORS,
    PARKED,
    TEAMS,
    Lineage,
    explicit_times,
    graph_value,
)

__all__ = ["big_run", "copied_runs", "template_runs"]


def template_runs(people: dict[str, User], states: dict[str, int]) -> dict[str, list[Any]]:
    """state → the events of one real run left in that state (on a small graph of the core)."""
    from editor.engine.ports import Envelope
    from editor.engine.status import run_status
    from editor.models import RunEvent
    from editor.services import documents, runs
    from editor.services.runs import failures as run_failures
    from editor.store import OrmRunStore
    from editor.tasks import drive_run

    author, operator, approver = people["author"], people[OPERATORS[0]], people[APPROVERS[0]]
    made = documents.create_document(
        author, title="Template", slug="scale-template", text=json.dumps(graph_value(len(CORE)))
    )
    digest = documents.freeze(author, made.slug, expected_revision=1).graph

    def started() -> str:
        return runs.start_run(operator, digest, {"draft": "Tea is good."}, {"team": "x"}).run

    def record(run_id: str, kind: str, payload: dict[str, Any]) -> None:
        store = OrmRunStore()
        events = list(store.load_run(run_id).events)
        envelope = Envelope(run_id, len(events), events[-1].recorded_at, kind, payload)
        store.record(run_id, [envelope], run_status([*events, envelope]))

    made_runs: dict[str, str] = {}
    run = made_runs["completed"] = started()
    assert drive_run.call(run) == "suspended"
    runs.resume(approver, run, {"input": {"approved": True}, "comment": "Looks right."})
    assert drive_run.call(run) == "completed"
    run = made_runs["suspended"] = started()
    drive_run.call(run)
    run = made_runs["abandoned"] = started()
    drive_run.call(run)
    runs.abandon(operator, run, "Superseded by a later draft.")
    run = made_runs["failed"] = started()
    record(run, "NodeEntered", {"node": "write"})
    run_failures.fail_run(run, "the tool's service answered 503", "internal_error", OrmRunStore())
    made_runs["queued"] = started()
    run = made_runs["running"] = started()
    record(run, "NodeEntered", {"node": "write"})
    for state, parking in (
        (
            "budget_exceeded",
            ("BudgetExceeded", {"node": "write", "budget": {"kind": "steps", "limit": 2}}),
        ),
        (
            "needs_reconciliation",
            (
                "ReconciliationNeeded",
                {
                    "node": "write",
                    "tool": "http_request",
                    "call": 0,
                    "input": {"url": "http://example.test/"},
                    "idempotency_key": "sha256:" + "1" * 64,
                },
            ),
        ),
    ):
        run = made_runs[state] = started()
        record(run, "NodeEntered", {"node": "write"})
        kind, payload = parking
        if kind == "BudgetExceeded":
            payload = {**payload, "observed": 3}
        record(run, kind, payload)
    templates = {}
    for state, run_id in made_runs.items():
        if state not in states:
            continue
        templates[state] = list(RunEvent.objects.filter(run_id=run_id).order_by("seq"))
        assert templates[state], state
    return templates


def _retimed(value: Any, moment: str) -> Any:
    """A status with every pending item's ``at`` set to ``moment``."""
    if isinstance(value, dict) and "pending" in value:
        return {**value, "pending": [{**item, "at": moment} for item in value["pending"]]}
    return value


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def copied_runs(
    people: dict[str, User],
    lineages: list[Lineage],
    templates: dict[str, list[Any]],
    states: dict[str, int],
    rng: random.Random,
) -> int:
    """Copies of the template runs onto the seeded versions; how many events they hold."""
    from editor.engine.status import run_status
    from editor.models import Run, RunEvent
    from editor.store import envelope_of

    now = timezone.now()
    folded = {
        state: run_status([envelope_of(row) for row in rows]) for state, rows in templates.items()
    }
    # A few documents are run far more than the others (a skew like a real team's).
    weights = [1.0 / (rank + 1) ** 0.8 for rank in range(len(lineages))]
    plan = [state for state, count in states.items() for _ in range(count)]
    rng.shuffle(plan)
    starters = [people[name] for name in OPERATORS]
    approvers = list(APPROVERS)
    events_written = 0
    batch = 2_000
    with explicit_times(Run._meta.get_field("created_at"), Run._meta.get_field("updated_at")):
        for start in range(0, len(plan), batch):
            run_rows, event_rows = [], []
            chosen = rng.choices(lineages, weights=weights, k=len(plan[start : start + batch]))
            for state, lineage in zip(plan[start : start + batch], chosen, strict=True):
                template = templates[state]
                run_id = uuid.uuid4()
                created = now - timedelta(seconds=rng.randint(60, 365 * 24 * 3600))
                graph = rng.choice(lineage.graphs)
                labels = (
                    {"team": rng.choice(TEAMS), "env": rng.choice(("prod", "staging"))}
                    if rng.random() < 0.7
                    else {}
                )
                decider = rng.choice(approvers)
                stamps = [_stamp(created + timedelta(seconds=2 * n)) for n in range(len(template))]
                for row, stamp in zip(template, stamps, strict=True):
                    payload = row.payload
                    if row.kind == "GraphRunStarted":
                        payload = {**payload, "graph_hash": graph}
                        if labels:
                            payload["labels"] = labels
                        else:
                            payload.pop("labels", None)
                    elif row.kind == "Resumed":
                        payload = {**payload, "by": decider}
                    event_rows.append(
                        RunEvent(
                            run_id=run_id,
                            seq=row.seq,
                            schema_version=row.schema_version,
                            recorded_at=stamp,
                            kind=row.kind,
                            payload=payload,
                        )
                    )
                parked = state in PARKED
                finished = created + timedelta(seconds=2 * len(template))
                run_rows.append(
                    Run(
                        id=run_id,
                        graph_id=graph,
                        document_id=lineage.document_id,
                        input={"draft": "Tea is good."},
                        labels=labels,
                        state=state,
                        status=_retimed(folded[state], stamps[-1]),
                        event_count=len(template),
                        parked_at=finished if parked else None,
                        first_recorded_at=stamps[0],
                        last_recorded_at=stamps[-1],
                        created_at=created,
                        updated_at=finished,
                        created_by=rng.choice(starters),
                    )
                )
            Run.objects.bulk_create(run_rows, batch_size=1000)
            RunEvent.objects.bulk_create(event_rows, batch_size=5000)
            events_written += len(event_rows)
    return events_written


def big_run(people: dict[str, User], events: int) -> str:
    """A real run of a map over items, driven until its log holds about ``events`` events."""
    from editor.models import Run
    from editor.services import documents, runs
    from editor.tasks import drive_run

    graph = {
        "schema_version": 1,
        "nodes": [
            {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
            {
                "kind": "map",
                "payload": {
                    "id": "each",
                    "over": "items",
                    "concurrency": 8,
                    "body": {"kind": "node", "value": "echo-item"},
                },
            },
            {"kind": "tool", "payload": {"id": "echo-item", "tool": "echo"}},
        ],
        "edges": [{"from": "write", "to": "each"}],
    }
    author = people["author"]
    made = documents.create_document(
        author, title="Map over items", slug="map-over-items", text=json.dumps(graph)
    )
    digest = documents.freeze(author, made.slug, expected_revision=1).graph
    probe = runs.start_run(people[OPERATORS[0]], digest, {"items": list(range(10))})
    drive_run.call(probe.run)
    per_item = (Run.objects.get(id=probe.run).event_count - 6) / 10
    items = max(1, round((events - 6) / per_item))
    run = runs.start_run(
        people[OPERATORS[0]],
        digest,
        {"items": [f"item {n}" for n in range(items)]},
        {"team": "data"},
        document_slug=made.slug,
    )
    state = drive_run.call(run.run)
    assert state == "completed", state
    Run.objects.filter(id=probe.run).delete()
    return run.run
