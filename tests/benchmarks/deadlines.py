"""1,000 deadlines falling due in the same minute (issue 26, *Measure*): how late the workers act
on them, and that each is acted on once.

One document's gate has a policy that escalates it to another group at its due time. One run is
driven to the gate (the store writes its card), then cloned 999 times in bulk (rows, events and
cards: ``editor.waiting.rebuild_cards``), each card's due time set within the same minute,
starting ``--lead`` seconds after the workers start. Each card's task is queued for its
instant, as the store queues a new card's (``editor.waiting``); then ``--lost`` of those tasks
are deleted from the queue, as a worker's crash or a wiped queue would lose them, so the
workers' sweep must find those cards by itself. ``--workers`` ``db_worker`` processes (the
default poll interval) act on them.

Measured: for each card, the time from its due time to its recorded ``GateEscalated`` (p50,
p95, max; the ones whose task was lost apart), and every card checked: escalated exactly once,
never before its due time. The issue's figure: all acted on within 60 s, none twice.

PostgreSQL on a private cluster (``initdb`` in a temporary folder, loopback port
``GATEHOUSE_BENCH_PG_PORT``, default 55447); ``--sqlite`` on SQLite instead.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from django_setup import worker_environment  # noqa: E402

from tests.private_postgres import postgres_available, private_postgres  # noqa: E402

#: Seconds any phase may take before the benchmark gives up (a hang, not slowness).
BOUND = 600.0
#: The issue's bound: every deadline acted on within this many seconds of its due time.
TARGET_SECONDS = 60.0
SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}},
    "required": ["approved"],
}
GRAPH = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {"kind": "gate", "payload": {"id": "review", "approval_schema": SCHEMA}},
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "review"}, {"from": "review", "to": "publish"}],
}


def load() -> str:
    return " / ".join(f"{value:.1f}" for value in os.getloadavg())


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def populate(count: int) -> list[str]:
    """``count`` runs waiting at the gate, each with its card: their ids."""
    from django.contrib.auth.models import Group, User

    from editor.models import Run, RunEvent
    from editor.services import documents, runs
    from editor.services.documents import approvals
    from editor.tasks import drive_run
    from editor.waiting import rebuild_cards

    Group.objects.create(name="desk")
    author = User.objects.create_user("ada", password="benchmark-password-1")
    author.groups.add(Group.objects.get(name="authors"))
    operator = User.objects.create_user("otto", password="benchmark-password-1")
    operator.groups.add(Group.objects.get(name="operators"))
    made = documents.create_document(author, title="Refunds", text=json.dumps(GRAPH))
    digest = documents.freeze(author, made.slug, expected_revision=1).graph
    expiry = {"escalate_to": {"groups": ["desk"], "users": []}}
    policy = {"review": {"due": "1h", "on_expiry": expiry}}
    approvals.replace_policy(author, made.slug, {"gates": policy})
    first = runs.start_run(operator, digest, {"n": 0}, document_slug=made.slug).run
    assert drive_run.call(first) == "suspended"
    model = Run.objects.get(pk=first)
    events = list(RunEvent.objects.filter(run=model).order_by("seq"))
    clones, rows, ids = [], [], [first]
    for _ in range(count - 1):
        clone_id = uuid.uuid4()
        fields = {
            field.attname: getattr(model, field.attname)
            for field in Run._meta.concrete_fields
            if field.attname != "id"
        }
        clones.append(Run(id=clone_id, **fields))
        rows += [
            RunEvent(
                run_id=clone_id,
                seq=event.seq,
                recorded_at=event.recorded_at,
                kind=event.kind,
                payload=event.payload,
            )
            for event in events
        ]
        ids.append(str(clone_id))
    Run.objects.bulk_create(clones, batch_size=1000)
    RunEvent.objects.bulk_create(rows, batch_size=2000)
    rebuild_cards(ids)
    return ids


def schedule(ids: list[str], start: datetime, span: float, lost: int) -> set[str]:
    """Give the cards due times over ``span`` seconds from ``start``, queue each one's task for
    its instant (as the store does for a new card), and lose ``lost`` of those tasks; the runs
    whose task was lost."""
    from django.db import connection
    from django_tasks_db.models import DBTaskResult

    from editor.models import InboxCard
    from editor.waiting import EXPIRE, Deadline
    from editor.waiting import schedule as queue_deadlines

    DBTaskResult.objects.all().delete()  # the first run's own task, for its original due time
    deadlines = []
    for index, run_id in enumerate(ids):
        due = start + timedelta(seconds=span * index / len(ids))
        InboxCard.objects.filter(run_id=run_id).update(due_at=due)
        seq = InboxCard.objects.filter(run_id=run_id).values_list("seq", flat=True).get()
        deadlines.append(Deadline(run_id, seq, EXPIRE, due))
    queue_deadlines(deadlines)  # outside a transaction: queued at once
    step = max(1, len(ids) // lost) if lost else 0
    gone = {ids[index] for index in range(0, len(ids), step)} if lost else set()
    for task in DBTaskResult.objects.all():
        if task.args_kwargs["args"][0] in gone:
            task.delete()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    connection.close()
    return gone


def measure(
    env: dict[str, str], runs: int, workers: int, lead: float, lost: int, where: str
) -> None:
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from editor.models import InboxCard, RunEvent

    call_command("migrate", verbosity=0, interactive=False)
    started = time.monotonic()
    ids = populate(runs)
    start = timezone.now() + timedelta(seconds=lead)
    gone = schedule(ids, start, 59.0, lost)
    print(
        f"deadlines on {where}: {runs:,} cards escalating at their due times, all within one "
        f"minute from {lead:.0f} s after {workers} worker(s) start; {len(gone)} of their tasks "
        f"lost (built in {time.monotonic() - started:.0f} s); {os.cpu_count()} cores, "
        f"load average {load()}"
    )
    command = ["manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--verbosity", "0"]
    processes = [
        subprocess.Popen([sys.executable, *command], cwd=ROOT, env=env) for _ in range(workers)
    ]
    try:
        deadline = time.monotonic() + BOUND
        while RunEvent.objects.filter(kind="GateEscalated").count() < runs:
            assert time.monotonic() < deadline, "gave up waiting for every escalation"
            assert all(process.poll() is None for process in processes), "a worker stopped"
            time.sleep(0.5)
        # A little longer: a second escalation of any card would show now.
        time.sleep(2.0)
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    escalations: dict[str, list[tuple[datetime, datetime]]] = {run: [] for run in ids}
    rows = RunEvent.objects.filter(kind="GateEscalated").values_list(
        "run_id", "payload", "recorded_at"
    )
    for run_id, payload, recorded in rows:
        escalations[str(run_id)].append((moment(payload["due_at"]), moment(recorded)))
    twice = [run for run, found in escalations.items() if len(found) != 1]
    assert not twice, f"{len(twice)} cards not escalated exactly once"
    late = {run: (found[0][1] - found[0][0]).total_seconds() for run, found in escalations.items()}
    early = [value for value in late.values() if value < 0]
    assert not early, f"{len(early)} cards escalated before their due time"
    unacted = InboxCard.objects.filter(expired_at__isnull=True).count()
    assert unacted == 0, f"{unacted} cards not marked acted on"
    kept = [value for run, value in late.items() if run not in gone]
    swept = [value for run, value in late.items() if run in gone]
    worst = max(late.values())
    print(
        f"  their own tasks ({len(kept):,}): after the due time p50 "
        f"{statistics.median(kept):.2f} s, p95 {percentile(kept, 0.95):.2f} s, "
        f"max {max(kept):.2f} s"
    )
    if swept:
        print(
            f"  found by the sweep ({len(swept):,}, tasks lost): p50 "
            f"{statistics.median(swept):.2f} s, p95 {percentile(swept, 0.95):.2f} s, "
            f"max {max(swept):.2f} s"
        )
    verdict = "met" if worst <= TARGET_SECONDS else "missed"
    print(
        f"  every card escalated exactly once, none early; the latest {worst:.2f} s after its due "
        f"time (target: within {TARGET_SECONDS:.0f} s: {verdict}); load average at the end {load()}"
    )
    connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--lead", type=float, default=15.0)
    parser.add_argument("--lost", type=int, default=100)
    parser.add_argument("--sqlite", action="store_true")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gatehouse-bench-deadlines-") as name:
        folder = Path(name)
        options = (arguments.runs, arguments.workers, arguments.lead, arguments.lost)
        if arguments.sqlite:
            sqlite = f"sqlite:///{folder / 'bench.sqlite3'}"
            measure(worker_environment(folder, sqlite), *options, "SQLite")
            return
        if not postgres_available():
            print("-- skipped: no PostgreSQL server binaries here")
            return
        port = int(os.environ.get("GATEHOUSE_BENCH_PG_PORT", "55447"))
        with private_postgres(port, prefix="gatehouse-bench-deadlines-pg-") as server:
            measure(worker_environment(folder, server.url), *options, "PostgreSQL")


if __name__ == "__main__":
    main()
