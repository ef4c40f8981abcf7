"""Benchmark of the approval inbox with 10,000 pending suspensions.

Sets Django up on a throwaway SQLite database (or the database of ``DATABASE_URL`` when it is
set — an empty database: run it against PostgreSQL too), drives one run of a write → review
(gate) → publish graph to its gate, then clones that suspended run 10,000 times (rows and
events written in bulk: the same bytes the engine wrote, each clone its own run), and measures,
through Django's test client (the whole stack but the socket):

* the inbox's first page, ``GET /inbox/`` (50 cards with their generated forms), and
  ``GET /v1/inbox``: server time p50 / p95 and the number of SQL queries; the same filtered
  by document, and ``GET /v1/inbox`` searching the prompts;
* the resolve round trip, ``POST /inbox/<run>/resolve/`` as the card's htmx form posts it:
  validation, the guarded append of ``Resumed``, the continuation queued, and the receipt.

Run it with ``make bench`` (or ``python tests/benchmarks/inbox.py``).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from django_setup import setup_django  # noqa: E402  (this folder, on sys.path when run)

PENDING = 10_000
PAGE_REQUESTS = 30
RESOLVES = 30
SCHEMA = {
    "type": "object",
    "properties": {
        "draft": {"type": "string", "title": "Draft", "maxLength": 20000},
        "approved": {"type": "boolean", "title": "Approve"},
        "comment": {"type": "string"},
    },
    "required": ["draft", "approved"],
}
GRAPH = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {
            "kind": "gate",
            "payload": {
                "id": "review",
                "name": "Review the draft",
                "prompt": "Publish this draft?",
                "approval_schema": SCHEMA,
            },
        },
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "review"}, {"from": "review", "to": "publish"}],
}


def user(name: str, group: str) -> Any:
    from django.contrib.auth.models import Group, User

    person = User.objects.create_user(name, password="benchmark-password-1")
    person.groups.add(Group.objects.get(name=group))
    return person


def populate() -> str:
    """One real suspended run, cloned ``PENDING`` times; the graph hash."""
    import json

    from django.utils import timezone

    from editor.models import Run, RunEvent
    from editor.services import documents, runs
    from editor.tasks import drive_run

    author, operator = user("ada", "authors"), user("otto", "operators")
    created = documents.create_document(author, title="Release notes", text=json.dumps(GRAPH))
    frozen = documents.freeze(author, created.slug, expected_revision=1)
    first = runs.start_run(
        operator, frozen.graph, {"draft": "Tea is good."}, document_slug=created.slug
    )
    drive_run.call(first.run)
    model = Run.objects.get(id=first.run)
    assert model.state == "suspended", model.state
    events = list(RunEvent.objects.filter(run=model).order_by("seq"))
    start = timezone.now() - timezone.timedelta(days=1)
    clones, rows = [], []
    for index in range(PENDING):
        clone_id = uuid.uuid4()
        clones.append(
            Run(
                id=clone_id,
                graph_id=model.graph_id,
                document_id=model.document_id,
                input=model.input,
                labels={},
                state=model.state,
                status=model.status,
                event_count=model.event_count,
                parked_at=start + timezone.timedelta(seconds=index),
                created_by_id=operator.id,
            )
        )
        rows.extend(
            RunEvent(
                run_id=clone_id,
                seq=event.seq,
                schema_version=event.schema_version,
                recorded_at=event.recorded_at,
                kind=event.kind,
                payload=event.payload,
            )
            for event in events
        )
    Run.objects.bulk_create(clones, batch_size=1000)
    RunEvent.objects.bulk_create(rows, batch_size=2000)
    model.delete()
    # The inbox lists cards, which the store writes with each append: as it would have.
    from editor.waiting import rebuild_cards

    rebuild_cards([str(clone.id) for clone in clones])
    from django.db import connection

    with connection.cursor() as cursor:  # statistics, as a live database's autovacuum keeps them
        cursor.execute("ANALYZE")
    return frozen.graph


def timed(call: Any, repeats: int) -> tuple[list[float], int, Any]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    samples, queries, answer = [], 0, None
    for _ in range(repeats):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            answer = call()
            samples.append((time.perf_counter() - started) * 1000)
        queries = len(captured.captured_queries)
    return samples, queries, answer


def p(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="gatehouse-inbox-bench-") as directory:
        setup_django(Path(directory), database="inbox.sqlite3", respect_url=True)
        from django.db import connection
        from django.test import Client

        from editor.models import Run

        started = time.perf_counter()
        populate()
        built = time.perf_counter() - started
        approver = user("april", "approvers")
        client = Client()
        client.force_login(approver)
        pending = Run.objects.filter(state="suspended").count()
        print(
            f"inbox benchmark: {pending:,} pending suspensions on {connection.vendor} "
            f"(built in {built:.1f} s)"
        )
        from editor.models import Document

        slug = Document.objects.get().slug
        for label, path in (
            ("GET /inbox/ (first page)", "/inbox/"),
            ("GET /v1/inbox", "/v1/inbox"),
            # Filtered: by the run's document (graph hash runs included), and a search of the
            # prompts (every run's parking event is looked into).
            ("GET /inbox/?document=…", f"/inbox/?document={slug}"),
            ("GET /v1/inbox?q=…", "/v1/inbox?q=publish"),
        ):
            client.get(path)  # warm-up: templates, the graph's node names
            samples, queries, answer = timed(lambda path=path: client.get(path), PAGE_REQUESTS)
            assert answer.status_code == 200, answer.status_code
            print(
                f"  {label:28} p50 {statistics.median(samples):6.1f} ms  "
                f"p95 {p(samples, 0.95):6.1f} ms  {queries} queries"
            )
        oldest = list(Run.objects.filter(state="suspended").order_by("parked_at", "id")[:RESOLVES])
        hx = {"HTTP_HX_REQUEST": "true"}

        def resolve(run: Any) -> Any:
            item = run.status["pending"][0]
            return client.post(
                f"/inbox/{run.id}/resolve/",
                {
                    "node": item["node"],
                    "seq": str(item["seq"]),
                    "field-draft": "Tea is good.",
                    "field-comment": "fine",
                    # The Approve button: the schema's required boolean, decided in one click.
                    "field-approved": "true",
                },
                **hx,
            )

        samples = []
        for run in oldest:
            started = time.perf_counter()
            answer = resolve(run)
            samples.append((time.perf_counter() - started) * 1000)
            assert answer.status_code == 200 and b"Resolved by" in answer.content, answer.content[
                :500
            ]
        print(
            f"  {'POST /inbox/<run>/resolve/':28} p50 {statistics.median(samples):6.1f} ms  "
            f"p95 {p(samples, 0.95):6.1f} ms  (validate, record Resumed, queue, receipt)"
        )


if __name__ == "__main__":
    main()
