"""Benchmark of comparing two runs of one document (issue 24; the budget: the page in 150 ms of
server time at p95).

Sets Django up on a throwaway SQLite database (or the empty database of ``DATABASE_URL``: run it
against PostgreSQL too). A document whose draft is a chain of 500 ``echo`` nodes is run twice by
the engine in memory, with inputs that differ in one field, and both logs are stored as the
store keeps them (the document's runs). Then, through Django's test client (the whole stack but
the socket), server time p50 / p95 and SQL queries of:

* ``GET /runs/compare/?run=a&run=b``: the page, every node side by side with its state, the
  differences of its input and output, its durations and tokens;
* ``GET /v1/runs/{a}/compare/{b}``: the same as JSON.

Run it with ``make bench`` (or ``python tests/benchmarks/compare_page.py``). It measures only:
it asserts nothing about the figures.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from django_setup import setup_django  # noqa: E402  (this folder, on sys.path when run)
from run_page import CPU, p, stored_run, timed  # noqa: E402

NODES = 500
REQUESTS = 30
BUDGET_MS = 150.0


def chain(size: int) -> dict[str, Any]:
    """``n0`` → ``n1`` → … (``echo`` each)."""
    return {
        "schema_version": 1,
        "nodes": [
            {"kind": "tool", "payload": {"id": f"n{index}", "tool": "echo"}}
            for index in range(size)
        ],
        "edges": [{"from": f"n{index}", "to": f"n{index + 1}"} for index in range(size - 1)],
    }


def drive_in_memory(digest: str, data: bytes, run_input: Any) -> list[Any]:
    from editor.engine import Engine, InMemoryStore
    from editor.services.installation import installation, limits

    store = InMemoryStore()
    store.graphs[digest] = data
    run_id = store.start(digest, run_input)
    engine = Engine(store, installation(), limits=limits())
    assert engine.drive(run_id) == "completed"
    return list(store.events[run_id])


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="gatehouse-compare-bench-") as directory:
        setup_django(Path(directory), database="compare.sqlite3", respect_url=True)
        from django.contrib.auth.models import Group, User
        from django.db import connection
        from django.test import Client

        from editor.models import Document, Run
        from editor.services import documents
        from editor.services.documents import graphs

        author = User.objects.create_user("ada", password="benchmark-password-1")
        author.groups.add(Group.objects.get(name="authors"))
        text = json.dumps(chain(NODES))
        documents.create_document(author, title="Chain", slug="chain", text=text)
        document = Document.objects.get(slug="chain")
        stored = graphs.store_graph(author, text)
        data = graphs.export_graph(stored.graph)
        started = time.perf_counter()
        runs = []
        for amount in (5, 5000):
            run_input = {"text": "tea " * 8, "amount": amount}
            events = drive_in_memory(stored.graph, data, run_input)
            run_id = stored_run(stored.graph, events, author, run_input)
            Run.objects.filter(pk=run_id).update(document_id=document.pk)
            runs.append((run_id, len(events)))
        built = time.perf_counter() - started
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        client = Client()
        client.force_login(author)
        (a, a_events), (b, b_events) = runs
        print(
            f"compare benchmark on {connection.vendor}: two runs of a {NODES}-node chain "
            f"({a_events:,} and {b_events:,} events), built in {built:.1f} s"
        )
        client.get("/runs/")  # the process's first page: templates, URL patterns
        for label, path in (
            ("GET /runs/compare/?run=a&run=b", f"/runs/compare/?run={a}&run={b}"),
            ("GET /v1/runs/{a}/compare/{b}", f"/v1/runs/{a}/compare/{b}"),
        ):
            first, _queries, _ = timed(lambda path=path: client.get(path), 1)
            samples, queries, answer = timed(lambda path=path: client.get(path), REQUESTS)
            assert answer.status_code == 200, answer.status_code
            p50 = statistics.median(samples)
            print(
                f"  {label:31} p50 {p50:6.1f} ms  p95 {p(samples, 0.95):6.1f} ms  "
                f"cpu p50 {statistics.median(CPU):5.1f} ms  {queries} queries  "
                f"{len(answer.content) // 1024} KiB  (p95 {p(samples, 0.95) / BUDGET_MS:.0%} of "
                f"the {BUDGET_MS:.0f} ms budget; first: {first[0]:.0f} ms)"
            )


if __name__ == "__main__":
    main()
