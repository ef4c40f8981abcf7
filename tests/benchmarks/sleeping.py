"""Many runs asleep at once (issue 23, *Measure*): how late they wake, what they cost asleep.

Each run walks a delay of ``--delay`` seconds, then an ``echo`` tool. ``--runs`` runs are started at
once and driven to sleep by ``--workers`` ``db_worker`` processes (polling their queue at the
default interval, ``GATEHOUSE_WORKER_POLL_MS``, as deployed); then, while every run sleeps and none
is due, the idle cost is watched: SQL statements per second the workers send (counted in the workers
themselves, ``query_counter.py``) and the CPU they use. Then the runs wake; for each, the wake
latency is the time from its recorded ``wake_at`` to its recorded ``SleepCompleted``: p50, p95 and
max, and every run is checked: woken exactly once, never before its ``wake_at``, completed.

SQLite by default (a file under a temporary folder); ``--postgres`` on a private PostgreSQL
(``initdb`` in a temporary folder, loopback port ``GATEHOUSE_BENCH_PG_PORT``, default 55445).
Options: ``--runs N`` (default 400: what a ``make bench`` run on SQLite takes in about a
minute), ``--delay S`` (default 30; it must outlast putting every run to sleep, about 12-20
runs/s per worker on a loaded 2-core machine), ``--workers W`` (default 1), ``--spread S``
(default 0: run *n* waits ``n * S / runs`` seconds longer, so the wakes come due over ``S``
more seconds instead of at the rate the runs fell asleep, which outruns the workers: a wake's
drive does more than the drive that put the run to sleep). The output gives both rates, so a
latency that measures a backlog says so. The issue's figure: ``--postgres --runs 10000
--workers 2 --delay 900``, and again with ``--spread 1200``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from django_setup import worker_environment  # noqa: E402

from tests.private_postgres import postgres_available, private_postgres  # noqa: E402

# One operator starts every run: past the hourly rate (1,000 by default) for --runs 10000,
# which this benchmark does not measure.
UNMEASURED_RATE = {"GATEHOUSE_RATE_RUNS_PER_HOUR": "1000000"}

COUNTER = Path(__file__).with_name("query_counter.py")
#: Seconds any phase may take before the benchmark gives up (a hang, not slowness).
BOUND = 3600.0
TICKS = os.sysconf("SC_CLK_TCK")


def graph(delay: int) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "nodes": [
            {"kind": "delay", "payload": {"id": "cooloff", "seconds": delay}},
            {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
        ],
        "edges": [{"from": "cooloff", "to": "publish"}],
    }


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def load() -> str:
    """The machine's load averages (1, 5, 15 minutes): the figures are read beside them."""
    return " / ".join(f"{value:.1f}" for value in os.getloadavg())


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# The database is the benchmark's own: every run in it is one of ``ids``, so the counts read
# the whole table rather than send 10,000 ids twice a second (which cost the machine a fifth of
# its CPU while the workers were measured).


def slept(ids: list[str]) -> int:
    """How many of the runs have gone to sleep (some may be awake again by then)."""
    from editor.models import RunEvent

    return RunEvent.objects.filter(kind="SleepStarted").count()


def count_states(ids: list[str]) -> Counter[str]:
    from django.db.models import Count

    from editor.models import Run

    counts = Run.objects.values_list("state").annotate(n=Count("id")).order_by()
    return Counter(dict(counts))


def wait_for(condition: Any, what: str, workers: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting until {what}"
        assert all(worker.poll() is None for worker in workers), "a worker stopped"
        time.sleep(1.0)


def queries(files: list[Path]) -> int:
    total = 0
    for file in files:
        with contextlib.suppress(OSError, ValueError):
            total += int(file.read_text() or 0)
    return total


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def measure(
    env: dict[str, str],
    folder: Path,
    runs: int,
    delay: int,
    count: int,
    where: str,
    spread: int = 0,
) -> None:
    os.environ.update(env)
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.db import connection

    from editor.models import RunEvent
    from editor.services import runs as run_service
    from editor.services.documents import graphs

    call_command("migrate", verbosity=0, interactive=False)
    operator = User.objects.create_user("operator", password="benchmark-password-1")
    operator.groups.set(Group.objects.all())
    # With --spread, run n waits n * spread / runs seconds longer than --delay: its own graph
    # of that delay (one per distinct delay), so the wakes come at a rate the workers can keep.
    offsets = [n * spread // runs if spread else 0 for n in range(runs)]
    digests = {
        offset: graphs.store_graph(operator, json.dumps(graph(delay + offset))).graph
        for offset in sorted(set(offsets))
    }
    print(
        f"sleeping runs on {where}: {runs:,} runs through a delay of {delay} s"
        f"{f' to {delay + max(offsets)} s' if spread else ''}, "
        f"{count} worker(s) polling every {settings.GATEHOUSE_WORKER_POLL_MS} ms; "
        f"{os.cpu_count()} cores, "
        f"load average {load()}"
    )
    ids = [
        run_service.start_run(operator, digests[offset], {"n": n}).run
        for n, offset in enumerate(offsets)
    ]
    connection.close()
    files = [folder / f"queries-{index}" for index in range(count)]
    command = ["db_worker", "--no-reload", "--no-startup-delay", "--verbosity", "0"]
    workers = [
        subprocess.Popen([sys.executable, str(COUNTER), str(file), *command], cwd=ROOT, env=env)
        for file in files
    ]
    try:
        started = time.monotonic()
        wait_for(lambda: slept(ids) == runs, "every run slept", workers)
        asleep = time.monotonic() - started
        first_wake = min(
            moment(payload["wake_at"])
            for payload in RunEvent.objects.filter(run_id__in=ids, kind="SleepStarted").values_list(
                "payload", flat=True
            )
        )
        connection.close()
        # The idle window: every run asleep, none due yet (a margin before the first wake).
        window = (first_wake - datetime.now(first_wake.tzinfo)).total_seconds() - 1.0
        if window >= 2.0:
            time.sleep(0.5)  # the last drive's own statements settle
            q0, c0, t0 = queries(files), sum(cpu_seconds(w.pid) for w in workers), time.monotonic()
            time.sleep(window - 0.5)
            q1, c1, t1 = queries(files), sum(cpu_seconds(w.pid) for w in workers), time.monotonic()
            idle = (q1 - q0) / (t1 - t0), (c1 - c0) / (t1 - t0) * 100
        else:
            idle = None
        wait_for(lambda: count_states(ids)["completed"] == runs, "every run completed", workers)
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
    wake_at: dict[str, datetime] = {}
    woken: dict[str, list[datetime]] = {run: [] for run in ids}
    rows = RunEvent.objects.filter(run_id__in=ids, kind__in=("SleepStarted", "SleepCompleted"))
    for run_id, kind, payload, recorded in rows.values_list(
        "run_id", "kind", "payload", "recorded_at"
    ):
        if kind == "SleepStarted":
            wake_at[str(run_id)] = moment(payload["wake_at"])
        else:
            woken[str(run_id)].append(moment(recorded))
    twice = [run for run, times in woken.items() if len(times) != 1]
    assert not twice, f"{len(twice)} runs not woken exactly once"
    late = [(woken[run][0] - wake_at[run]).total_seconds() for run in ids]
    early = [value for value in late if value < 0]
    assert not early, f"{len(early)} runs woken before their wake_at"
    print(f"  asleep: all {runs:,} in {asleep:.1f} s after the workers started")
    if idle is None:
        print("  idle: no window before the first wake (raise --delay)")
    else:
        print(
            f"  idle while all sleep ({window:.0f} s): {idle[0]:.1f} SQL statements/s from the "
            f"workers, worker CPU {idle[1]:.1f}% of a core"
        )
    print(
        f"  wake latency after wake_at: p50 {statistics.median(late):.3f} s, "
        f"p95 {percentile(late, 0.95):.3f} s, max {max(late):.3f} s; "
        f"none early, each woken once, all {runs:,} completed"
    )
    # Wakes that come faster than the workers drive them wait in the queue: the latency then
    # measures the backlog, not the waking. Both rates say which it was.
    first_due, last_due = min(wake_at.values()), max(wake_at.values())
    last_woken = max(times[0] for times in woken.values())
    due_over = (last_due - first_due).total_seconds()
    arriving = runs / max(due_over, 1e-3)
    driven = runs / max((last_woken - first_due).total_seconds(), 1e-3)
    print(
        f"  wakes came due at {arriving:.1f} runs/s (over {due_over:.0f} s); "
        f"the workers woke {driven:.1f} runs/s"
    )
    print(f"  load average at the end: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--delay", type=int, default=30)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--spread", type=int, default=0)
    parser.add_argument("--postgres", action="store_true")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gatehouse-bench-sleeping-") as name:
        folder = Path(name)
        if not arguments.postgres:
            url = f"sqlite:///{folder / 'bench.sqlite3'}"
            env = worker_environment(folder, url, **UNMEASURED_RATE)
            measure(
                env,
                folder,
                arguments.runs,
                arguments.delay,
                arguments.workers,
                "SQLite",
                arguments.spread,
            )
            return
        if not postgres_available():
            print("-- skipped: no PostgreSQL server binaries here")
            return
        port = int(os.environ.get("GATEHOUSE_BENCH_PG_PORT", "55445"))
        with private_postgres(port, prefix="gatehouse-bench-sleeping-pg-") as server:
            env = worker_environment(folder, server.url, **UNMEASURED_RATE)
            measure(
                env,
                folder,
                arguments.runs,
                arguments.delay,
                arguments.workers,
                "PostgreSQL",
                arguments.spread,
            )


if __name__ == "__main__":
    main()
