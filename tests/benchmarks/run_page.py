"""Benchmark of the run page of a 5,000-event run (spec 06, *Runs*; the budget: it opens in
150 ms of server time, and asks nothing while the run rests).

Sets Django up on a throwaway SQLite database (or the empty database of ``DATABASE_URL``: run it
against PostgreSQL too). The engine drives, in memory, a run of prepare (echo) → each item of a
map (echo, 830 items) → review (a gate): 5,000 events. Its log is stored as the engine wrote it
twice: once parked at the gate (a run that rests), once completed after the gate. Measured
through Django's test client (the whole stack but the socket), server time p50 / p95 and SQL
queries:

* ``GET /runs/<id>/``: the page (status, the canvas with every node marked, the newest page of
  the timeline); the first request also lays the canvas out (Graphviz), the others find it in
  the cache, as every later visitor does; the first visit after each step of the run reads and
  folds the trace again (measured with the process's trace cache emptied before each), later
  ones find it;
* ``GET /runs/<id>/events/?before=…`` (**Load older**) deep in the log, the map's body node's
  detail (830 instances), and ``GET /runs/<id>/log.jsonl`` (**Download log**, all 5,000);

and, for the resting run, what its page asks of the server by itself: no timer (``every``) and
no request trigger but the one its event stream fires (``sse:run``), and none at all for the
finished run.

Run it with ``make bench`` (or ``python tests/benchmarks/run_page.py``).
"""

from __future__ import annotations

import json
import re
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

ITEMS = 830
REQUESTS = 30
BUDGET_MS = 150.0
GRAPH = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "prepare", "tool": "echo"}},
        {
            "kind": "map",
            "payload": {
                "id": "fan",
                "name": "Each item",
                "over": "items",
                "concurrency": 8,
                "body": {"kind": "node", "value": "each"},
            },
        },
        {"kind": "tool", "payload": {"id": "each", "tool": "echo"}},
        {
            "kind": "gate",
            "payload": {
                "id": "review",
                "prompt": "Ship it?",
                "approval_schema": {"type": "object"},
            },
        },
    ],
    "edges": [{"from": "prepare", "to": "fan"}, {"from": "fan", "to": "review"}],
}


def drive_in_memory(digest: str, data: bytes) -> tuple[list[Any], list[Any]]:
    """The engine's logs of one run: parked at the gate, and completed after it."""
    from editor.engine import Engine, InMemoryStore, prepare_resume, run_status
    from editor.services.installation import installation, limits

    store = InMemoryStore()
    store.graphs[digest] = data
    run_input = {"items": [{"n": index, "text": "tea " * 8} for index in range(ITEMS)]}
    run_id = store.start(digest, run_input)
    engine = Engine(store, installation(), limits=limits())
    assert engine.drive(run_id) == "suspended"
    parked = list(store.events[run_id])
    record = store.load_run(run_id)
    events, status = prepare_resume(record, {"input": {"ok": True}}, "april", _now())
    store.record(run_id, events, status)
    assert engine.drive(run_id) == "completed"
    assert run_status(store.events[run_id])["state"] == "completed"
    return parked, list(store.events[run_id])


def _now() -> Any:
    from django.utils import timezone

    return timezone.now()


def stored_run(digest: str, events: list[Any], operator: Any, run_input: Any) -> str:
    """A run row holding ``events`` (rewritten under its own id), as the store keeps one."""
    from editor.engine import run_status
    from editor.engine.summary import call_counts
    from editor.models import Run, RunEvent

    run_id = uuid.uuid4()
    status = run_status(events)
    steps, tokens_in, tokens_out = call_counts(events)
    Run.objects.create(
        id=run_id,
        graph_id=digest,
        input=run_input,
        state=status["state"],
        status=status,
        event_count=len(events),
        parked_at=_now() if status["state"] == "suspended" else None,
        first_recorded_at=events[0].recorded_at,
        last_recorded_at=events[-1].recorded_at,
        step_count=steps,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        created_by=operator,
    )
    RunEvent.objects.bulk_create(
        (
            RunEvent(
                run_id=run_id,
                seq=event.seq,
                schema_version=event.schema_version,
                recorded_at=event.recorded_at,
                kind=event.kind,
                payload=event.payload,
            )
            for event in events
        ),
        batch_size=1000,
    )
    return str(run_id)


CPU: list[float] = []


def timed(call: Any, repeats: int) -> tuple[list[float], int, Any]:
    """Wall-clock samples (ms); the CPU time of each (ms, this process: the server's work and
    the test client's, which stays the same under a busy machine) goes to :data:`CPU`."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    samples, queries, answer = [], 0, None
    CPU.clear()
    for _ in range(repeats):
        with CaptureQueriesContext(connection) as captured:
            started, cpu = time.perf_counter(), time.process_time()
            answer = call()
            if getattr(answer, "streaming", False):
                answer.content_length = sum(len(part) for part in answer.streaming_content)
            samples.append((time.perf_counter() - started) * 1000)
            CPU.append((time.process_time() - cpu) * 1000)
        queries = len(captured.captured_queries)
    return samples, queries, answer


def p(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def asks_by_itself(page: str) -> list[str]:
    """What the page fetches without a person doing anything: its htmx triggers."""
    return re.findall(r'hx-trigger="([^"]+)"', page)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="gatehouse-run-page-bench-") as directory:
        setup_django(Path(directory), database="run_page.sqlite3", respect_url=True)
        from django.contrib.auth.models import Group, User
        from django.db import connection
        from django.test import Client

        from editor.services.documents import graphs

        author = User.objects.create_user("ada", password="benchmark-password-1")
        author.groups.add(Group.objects.get(name="authors"))
        operator = User.objects.create_user("otto", password="benchmark-password-1")
        operator.groups.add(Group.objects.get(name="operators"))
        stored = graphs.store_graph(author, json.dumps(GRAPH))
        data = graphs.export_graph(stored.graph)
        started = time.perf_counter()
        parked, finished = drive_in_memory(stored.graph, data)
        run_input = {"items": [{"n": index, "text": "tea " * 8} for index in range(ITEMS)]}
        resting = stored_run(stored.graph, parked, operator, run_input)
        done = stored_run(stored.graph, finished, operator, run_input)
        built = time.perf_counter() - started
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        client = Client()
        client.force_login(operator)
        print(
            f"run page benchmark on {connection.vendor}: a run of {len(parked):,} events parked "
            f"at its gate, and the same run completed ({len(finished):,} events); built in "
            f"{built:.1f} s"
        )
        from editor.services.runs import pages as run_pages

        client.get("/runs/")  # the process's first page: templates, URL patterns
        for label, run_id in (("parked", resting), ("completed", done)):
            path = f"/runs/{run_id}/"
            cold_samples, _queries, _ = timed(lambda path=path: client.get(path), 1)

            def first_visit(path: str = path) -> Any:
                # As the first visitor after the run moved: its trace is not known yet.
                run_pages._trace.cache_clear()
                return client.get(path)

            fresh, fresh_queries, _ = timed(first_visit, REQUESTS)
            fresh_cpu = statistics.median(CPU)
            samples, queries, answer = timed(lambda path=path: client.get(path), REQUESTS)
            assert answer.status_code == 200, answer.status_code
            page = answer.content.decode()
            p50 = statistics.median(samples)
            print(
                f"  GET /runs/<id>/ ({label:9}) p50 {p50:6.1f} ms  p95 {p(samples, 0.95):6.1f} ms"
                f"  cpu p50 {statistics.median(CPU):5.1f} ms  {queries} queries"
                f"  ({p50 / BUDGET_MS:.0%} of the {BUDGET_MS:.0f} ms budget;"
                f" first, laying the canvas out: {cold_samples[0]:.0f} ms)"
            )
            print(
                f"    first visit after a step  p50 {statistics.median(fresh):6.1f} ms  "
                f"p95 {p(fresh, 0.95):6.1f} ms  cpu p50 {fresh_cpu:5.1f} ms  "
                f"{fresh_queries} queries (the trace read and folded again)"
            )
            triggers = asks_by_itself(page)
            timers = [trigger for trigger in triggers if "every" in trigger]
            print(
                f"    asks by itself while it rests: {len(timers)} timers; "
                f"triggers {triggers or 'none'}"
            )
            assert not timers
            assert triggers == (["sse:run"] if label == "parked" else [])
        for label, path in (
            ("GET /runs/<id>/events/?before=100", f"/runs/{done}/events/?before=100"),
            ("GET /runs/<id>/node/?node=each", f"/runs/{done}/node/?node=each"),
            ("GET /runs/<id>/log.jsonl", f"/runs/{done}/log.jsonl"),
        ):
            client.get(path, headers={"HX-Request": "true"})
            samples, queries, answer = timed(
                lambda path=path: client.get(path, headers={"HX-Request": "true"}), 10
            )
            assert answer.status_code == 200, answer.status_code
            print(
                f"  {label:36} p50 {statistics.median(samples):6.1f} ms  "
                f"p95 {p(samples, 0.95):6.1f} ms  cpu p50 {statistics.median(CPU):5.1f} ms  "
                f"{queries} queries"
            )


if __name__ == "__main__":
    main()
