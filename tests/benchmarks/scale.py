"""The scale benchmark (``make bench-scale``): every page and API list of an installation after a
year of use, on SQLite and on a private PostgreSQL server.

For each database, in a process of its own: Django on a throwaway database (SQLite under a
temporary directory; PostgreSQL in a cluster made with ``initdb`` in a temporary directory, on
loopback port ``GATEHOUSE_BENCH_PG_PORT``, default 55444, removed afterwards), seeded by
``scale_seed.py`` (10,000 documents, 100,000 runs, about 1,000,000 events, 2,000 pending
items, 50,000 decisions), then each request below asked ``REQUESTS`` times (after one warm-up)
through Django's test client, in this process: the time is the server's (URL routing,
middleware, the view, its queries and the template), without a socket or an HTTP parser.
Printed per request: p50 and p95 in milliseconds, the SQL queries of one answer (a range when
they differed between answers) and the size of the answer's body.

Options: ``sqlite`` or ``postgresql`` (default both), ``--fraction 0.01`` to try the script on
a hundredth of the data, ``--json FILE`` to also write the figures as JSON, ``--keep DIR`` to
keep the SQLite database in ``DIR`` (or to use ``DATABASE_URL``'s, an empty database), seeded
once and measured again on later runs: for work on one query.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from django_setup import setup_django  # noqa: E402  (this folder)

from tests.private_postgres import postgres_available, private_postgres  # noqa: E402

REQUESTS = 30
#: The targets of the scale work: p95 server time on PostgreSQL, and the largest answer a list
#: may give (a whole document asked for is the exception).
TARGET_MS = 100.0
MAX_BYTES = 1024 * 1024


@dataclass
class Figure:
    label: str
    path: str
    p50: float
    p95: float
    queries: str
    bytes: int
    status: int


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def body_size(response: Any) -> int:
    if getattr(response, "streaming", False):
        return sum(len(chunk) for chunk in response.streaming_content)
    return len(response.content)


def measure(client: Any, label: str, path: str, headers: dict[str, str] | None = None) -> Figure:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    headers = headers or {}
    client.get(path, headers=headers)  # warm-up: templates, caches a process keeps
    samples, counts, size, status = [], [], 0, 0
    for _ in range(REQUESTS):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = client.get(path, headers=headers)
            size = body_size(response)
            samples.append((time.perf_counter() - started) * 1000)
        counts.append(len(captured.captured_queries))
        status = response.status_code
    low, high = min(counts), max(counts)
    return Figure(
        label,
        path,
        round(statistics.median(samples), 1),
        round(percentile(samples, 0.95), 1),
        str(low) if low == high else f"{low}–{high}",
        size,
        status,
    )


def late_cursors(seeded: Any) -> dict[str, str]:
    """Cursors far into each list, as the server would hand them out after many pages."""
    from editor.models import AgentDefinition, Document, FrozenGraph, Run, RunEvent
    from editor.services import inbox
    from editor.services.paging import encode_cursor

    def nth(queryset: Any, share: float) -> Any:
        return queryset[int(queryset.count() * share)]

    run = nth(Run.objects.order_by("-created_at", "-id"), 0.9)
    document_run = nth(
        Run.objects.filter(document__slug=seeded.busy_document).order_by("-created_at", "-id"),
        0.9,
    )
    document = nth(Document.objects.order_by("-updated_at", "-id"), 0.9)
    graph = nth(FrozenGraph.objects.order_by("hash").values_list("hash", flat=True), 0.9)
    agent = nth(AgentDefinition.objects.order_by("name", "hash"), 0.9)
    decision = nth(
        RunEvent.objects.filter(kind__in=("Resumed", "BudgetRaised", "Reconciled"))
        .order_by("-id")
        .values_list("id", flat=True),
        0.9,
    )
    pending, cursor = 0, None
    while pending < seeded.pending * 0.9:
        page = inbox.pending_items(cursor=cursor, limit=200)
        pending += len(page.items)
        if page.next is None:
            break
        cursor = page.next
    return {
        "runs": encode_cursor([run.created_at.isoformat(), str(run.id)]),
        "document_runs": encode_cursor([document_run.created_at.isoformat(), str(document_run.id)]),
        "documents": encode_cursor([document.updated_at.isoformat(), document.id]),
        "graphs": encode_cursor([graph]),
        "agents": encode_cursor([agent.name, agent.hash]),
        # The decision log's cursor: below the last event shown, and below the first inbox note
        # (the seeded installation has none: 1).
        "decisions": encode_cursor([decision, 1]),
        "inbox": cursor or "",
        "events": str(int(Run.objects.get(id=seeded.big_run).event_count * 0.8)),
        "versions": encode_cursor([5]),
    }


def requests(seeded: Any, cursors: dict[str, str]) -> list[tuple[str, str, dict[str, str]]]:
    hx = {"HX-Request": "true"}
    slug, busy, graph = seeded.many_versions, seeded.busy_document, seeded.busy_graph
    from datetime import timedelta

    from django.utils import timezone

    week_start = (timezone.now() - timedelta(days=100)).date()
    days = (week_start.isoformat(), (week_start + timedelta(days=6)).isoformat())
    return [
        ("graphs list, first page", "/", {}),
        ("graphs list, a search (htmx)", f"/?q={seeded.search}", hx),
        ("graphs list, a search for nothing (htmx)", "/?q=nothing-is-called-this", hx),
        ("graphs list, late page", f"/?cursor={cursors['documents']}", {}),
        ("versions page (20 versions)", f"/graphs/{slug}/versions/", {}),
        ("versions page, older", f"/graphs/{slug}/versions/?cursor={cursors['versions']}", {}),
        ("editor open (~200 nodes)", f"/graphs/{seeded.editor_document}/", {}),
        ("run page (5,000 events)", f"/runs/{seeded.big_run}/", {}),
        ("runs list, first page", "/runs/", {}),
        ("runs list, by state", "/runs/?state=failed", {}),
        ("runs list, by graph", f"/runs/?graph={graph}", {}),
        ("runs list, by document", f"/runs/?document={busy}", {}),
        ("runs list, by label", "/runs/?label=team%3Dpayments", {}),
        ("runs list, by two labels", "/runs/?label=team%3Dlegal&label=env%3Dstaging", {}),
        ("runs list, by who started", "/runs/?person=operator-3", {}),
        ("runs list, by days", f"/runs/?from={days[0]}&to={days[1]}", {}),
        ("runs list, by state and label (htmx)", "/runs/?state=failed&label=team", hx),
        ("runs list, late page", f"/runs/?cursor={cursors['runs']}", {}),
        ("inbox, first page", "/inbox/", {}),
        ("inbox, by document", f"/inbox/?document={busy}", {}),
        ("inbox, Resolved", "/inbox/resolved/", {}),
        ("inbox, Resolved by document", f"/inbox/resolved/?document={busy}", {}),
        ("agents page", "/agents/", {}),
        ("agents page, late page", f"/agents/?cursor={cursors['agents']}", {}),
        ("GET /v1/graphs?limit=50", "/v1/graphs?limit=50", {}),
        ("GET /v1/graphs late cursor", f"/v1/graphs?limit=50&cursor={cursors['graphs']}", {}),
        ("GET /v1/documents", "/v1/documents", {}),
        ("GET /v1/documents late cursor", f"/v1/documents?cursor={cursors['documents']}", {}),
        ("GET /v1/documents/{slug}/versions", f"/v1/documents/{slug}/versions", {}),
        (
            "GET /v1/documents/{slug}/versions late",
            f"/v1/documents/{slug}/versions?limit=5&cursor={cursors['versions']}",
            {},
        ),
        ("GET /v1/runs?limit=50", "/v1/runs?limit=50", {}),
        ("GET /v1/runs late cursor", f"/v1/runs?limit=50&cursor={cursors['runs']}", {}),
        ("GET /v1/runs?status=", "/v1/runs?limit=50&status=suspended", {}),
        ("GET /v1/runs?document=", f"/v1/runs?limit=50&document={busy}", {}),
        ("GET /v1/runs?label=", "/v1/runs?limit=50&label=team%3Dpayments", {}),
        (
            "GET /v1/runs?person=&from=&to=",
            f"/v1/runs?limit=50&person=operator-2&from={days[0]}&to={days[1]}",
            {},
        ),
        (
            "GET /v1/runs?document= late cursor",
            f"/v1/runs?limit=50&document={busy}&cursor={cursors['document_runs']}",
            {},
        ),
        ("GET /v1/runs/{id}/events", f"/v1/runs/{seeded.big_run}/events", {}),
        (
            "GET /v1/runs/{id}/events late",
            f"/v1/runs/{seeded.big_run}/events?after={cursors['events']}",
            {},
        ),
        ("GET /v1/agents?limit=50", "/v1/agents?limit=50", {}),
        ("GET /v1/agents late cursor", f"/v1/agents?limit=50&cursor={cursors['agents']}", {}),
        ("GET /v1/inbox", "/v1/inbox", {}),
        ("GET /v1/inbox late cursor", f"/v1/inbox?cursor={cursors['inbox']}", {}),
        ("GET /v1/inbox/resolved", "/v1/inbox/resolved", {}),
        (
            "GET /v1/inbox/resolved late cursor",
            f"/v1/inbox/resolved?cursor={cursors['decisions']}",
            {},
        ),
        ("GET /v1/tools", "/v1/tools", {}),
    ]


def run_here(fraction: float, json_path: str | None, kept: Path | None = None) -> None:
    """Seed and measure on the database this process is configured for (seeded once in
    ``kept``, when given, and measured again on later runs)."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from scale_seed import Scale, Seeded, seed  # this folder

    if kept is not None and (kept / "seeded.json").exists():
        seeded = Seeded(**json.loads((kept / "seeded.json").read_text()))
    else:
        seeded = seed(Scale(fraction=fraction))
        if kept is not None:
            (kept / "seeded.json").write_text(json.dumps(asdict(seeded)))
    vendor = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}[connection.vendor]
    print(
        f"{vendor}: seeded {seeded.documents:,} documents ({seeded.versions:,} versions), "
        f"{seeded.runs:,} runs, {seeded.events:,} events, {seeded.pending:,} pending items, "
        f"{seeded.decisions:,} decisions in {seeded.seconds:.0f} s"
    )
    client = Client()
    client.force_login(User.objects.get(username="operator-1"))
    cursors = late_cursors(seeded)
    figures: list[Figure] = []
    print(f"  {'request':40} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8} {'bytes':>10}")
    for label, path, headers in requests(seeded, cursors):
        if path.endswith("cursor="):  # a list too short for a late page at this scale
            continue
        figure = measure(client, label, path, headers)
        figures.append(figure)
        flags = []
        if figure.status != 200:
            flags.append(f"status {figure.status}")
        if figure.bytes > MAX_BYTES:
            flags.append("> 1 MiB")
        print(
            f"  {label:40} {figure.p50:8.1f} {figure.p95:8.1f} {figure.queries:>8} "
            f"{figure.bytes:10,}  {' '.join(flags)}",
            flush=True,
        )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT relname, pg_total_relation_size(oid) FROM pg_class WHERE relname IN "
                "('editor_run', 'editor_runevent', 'editor_draft', 'editor_frozengraph')"
            )
            sizes = ", ".join(f"{name} {size / 2**20:,.0f} MiB" for name, size in cursor)
        print(f"  tables with their indexes: {sizes}")
    if json_path:
        Path(json_path).write_text(
            json.dumps(
                {
                    "database": vendor,
                    "seeded": asdict(seeded),
                    "figures": list(map(asdict, figures)),
                },
                indent=2,
            )
        )


def _child(which: str, arguments: argparse.Namespace, env: dict[str, str]) -> None:
    command = [sys.executable, __file__, which, "--here", "--fraction", str(arguments.fraction)]
    if arguments.json:
        command += ["--json", f"{arguments.json}.{which}.json"]
    subprocess.run(command, check=True, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "which", nargs="?", default="both", choices=("both", "sqlite", "postgresql")
    )
    parser.add_argument("--fraction", type=float, default=1.0)
    parser.add_argument("--json", default=None)
    parser.add_argument("--keep", default=None, help="keep the SQLite database in this folder")
    parser.add_argument("--here", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.keep:
        kept = Path(arguments.keep).resolve()
        kept.mkdir(parents=True, exist_ok=True)
        setup_django(kept, database="scale.sqlite3", respect_url=True)
        run_here(arguments.fraction, arguments.json, kept)
        return
    if arguments.here:
        with tempfile.TemporaryDirectory(prefix="gatehouse-bench-scale-") as folder:
            setup_django(Path(folder), database="scale.sqlite3", respect_url=True)
            run_here(arguments.fraction, arguments.json)
        return
    wanted = ("sqlite", "postgresql") if arguments.which == "both" else (arguments.which,)
    for which in wanted:
        env = {
            k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DATABASE_URL_FILE")
        }
        if which == "sqlite":
            _child(which, arguments, env)
            continue
        if not postgres_available():
            print("-- PostgreSQL: skipped (no PostgreSQL server binaries here)")
            continue
        port = int(os.environ.get("GATEHOUSE_BENCH_PG_PORT", "55444"))
        with private_postgres(port, prefix="gatehouse-bench-scale-pg-") as server:
            _child(which, arguments, {**env, "DATABASE_URL": server.url})


if __name__ == "__main__":
    main()
