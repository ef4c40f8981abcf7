"""The workers' scale-out benchmark (``make bench-workers``): runs completed per second with 1, 2
and 4 ``db_worker`` processes on a private PostgreSQL server.

PostgreSQL is a cluster made with ``initdb`` in a temporary directory (loopback port
``GATEHOUSE_BENCH_PG_PORT``, default 55444; removed afterwards). For each number of workers,
2,000 runs of a graph of three tools that each wait 20 ms (``wait_tools.py``: the time a call to
another service takes) are started and queued first; then the workers are started, and the
throughput is the runs completed divided by the time from the first event a worker recorded to
the last. Then every run is checked: completed, its log exactly the expected events in order
(none lost, none twice), one queue task each; and ``manage.py audit_events`` over all of them.

Options: ``--runs N`` (default 2,000), ``--workers 1,2,4``.
"""

from __future__ import annotations

import argparse
import os
import signal
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

TOOLS = ("fetch", "score", "store")
GRAPH = {
    "schema_version": 1,
    "nodes": [{"kind": "tool", "payload": {"id": node, "tool": "wait"}} for node in TOOLS],
    "edges": [{"from": "fetch", "to": "score"}, {"from": "score", "to": "store"}],
}
EXPECTED = [
    "GraphRunStarted",
    *(
        kind
        for _node in TOOLS
        for kind in ("NodeEntered", "ToolCallRequested", "ToolCallCompleted", "NodeExited")
    ),
    "RunCompleted",
]
#: Seconds any round may take before the benchmark gives up (a hang, not slowness).
BOUND = 1800.0


def start_runs(count: int, digest: str, operator: Any) -> list[str]:
    from editor.services import runs

    return [runs.start_run(operator, digest, {"n": n}).run for n in range(count)]


def wait_until_done(ids: list[str], bound: float) -> None:
    from editor.models import Run

    deadline = time.monotonic() + bound
    while True:
        left = Run.objects.filter(id__in=ids).exclude(state="completed").count()
        if not left:
            return
        failed = Run.objects.filter(id__in=ids, state__in=("failed", "abandoned")).count()
        assert not failed, f"{failed} runs failed"
        assert time.monotonic() < deadline, f"{left} runs still not completed"
        time.sleep(0.2)


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def check(ids: list[str]) -> tuple[float, int]:
    """Every run's log is exactly the expected one; (seconds from the first event a worker
    recorded to the last, queue tasks per run at most)."""
    from django_tasks_db.models import DBTaskResult

    from editor.models import RunEvent

    logs: dict[str, list[str]] = {run: [] for run in ids}
    first, last = None, None
    rows = RunEvent.objects.filter(run_id__in=ids).order_by("run_id", "seq")
    for run_id, seq, kind, recorded in rows.values_list("run_id", "seq", "kind", "recorded_at"):
        log = logs[str(run_id)]
        assert seq == len(log), f"run {run_id}: event {seq} after {len(log)} events"
        log.append(kind)
        if kind != "GraphRunStarted":
            at = moment(recorded)
            first = at if first is None or at < first else first
            last = at if last is None or at > last else last
    wrong = [run for run, log in logs.items() if log != EXPECTED]
    assert not wrong, f"{len(wrong)} runs with another log, e.g. {logs[wrong[0]]}"
    tasks = Counter(
        args["args"][0]
        for args in DBTaskResult.objects.filter(task_path__endswith="drive_run").values_list(
            "args_kwargs", flat=True
        )
    )
    assert first is not None and last is not None
    return (last - first).total_seconds(), max(tasks[run] for run in ids)


WORKER = [
    "manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.05",
    "--verbosity", "0",
]  # fmt: skip


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def database_cpu(data: Path) -> dict[int, float]:
    """CPU time of each of the cluster's server processes (the postmaster and its children)."""
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    used = {postmaster: cpu_seconds(postmaster)}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if parent == postmaster:
                used[int(entry.name)] = cpu_seconds(int(entry.name))
    return used


def database_cpu_since(data: Path, before: dict[int, float]) -> float:
    """CPU time the server processes used since ``before`` (a process that ended meanwhile is
    not counted: the workers' own connections are still open when this is read)."""
    return sum(used - before.get(pid, 0.0) for pid, used in database_cpu(data).items())


def commits() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        )
        return int(cursor.fetchone()[0])


def workers(count: int, env: dict[str, str]) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, *WORKER], cwd=ROOT, env=env) for _ in range(count)]


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def measure(env: dict[str, str], data: Path, runs_per_round: int, counts: list[int]) -> None:
    os.environ.update(env)
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.db import connection

    from editor.services.documents import graphs

    call_command("migrate", verbosity=0, interactive=False)
    operator = User.objects.create_user("operator", password="benchmark-password-1")
    operator.groups.set(Group.objects.all())
    import json

    digest = graphs.store_graph(operator, json.dumps(GRAPH)).graph
    print(
        f"scale-out on PostgreSQL: {runs_per_round:,} runs a round, each {len(TOOLS)} tools "
        f"that wait 20 ms; {os.cpu_count()} cores"
    )
    print(
        f"  {'workers':>7} {'runs/s':>8} {'speed-up':>9} {'seconds':>8} {'worker CPU':>11} "
        f"{'db CPU':>7} {'commits':>8}  checked"
    )
    base = None
    for count in counts:
        ids = start_runs(runs_per_round, digest, operator)
        commits_before, db_before = commits(), database_cpu(data)
        connection.close()
        processes = workers(count, env)
        try:
            wait_until_done(ids, BOUND)
            worker_cpu = sum(cpu_seconds(process.pid) for process in processes)
            db_cpu = database_cpu_since(data, db_before)
            committed = commits() - commits_before
        finally:
            stop(processes)
        seconds, tasks = check(ids)
        audit = subprocess.run(
            [sys.executable, "manage.py", "audit_events"], cwd=ROOT, env=env, capture_output=True
        )
        assert audit.returncode == 0, audit.stdout.decode() + audit.stderr.decode()
        rate = runs_per_round / seconds
        base = base or rate
        per_run = 1000 / runs_per_round
        print(
            f"  {count:>7} {rate:8.1f} {rate / base:8.2f}x {seconds:8.1f} "
            f"{worker_cpu * per_run:8.1f} ms {db_cpu * per_run:4.1f} ms "
            f"{committed / runs_per_round:8.1f}  every log whole and once, {tasks} queue "
            "task(s) a run at most, audit_events clean",
            flush=True,
        )
    print(
        "  (CPU and commits per run: the workers' processes, the database's server processes, "
        "and the transactions the database committed, while the runs ran)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--workers", default="1,2,4")
    arguments = parser.parse_args()
    counts = [int(count) for count in arguments.workers.split(",")]
    if not postgres_available():
        print("-- skipped: no PostgreSQL server binaries here")
        return
    port = int(os.environ.get("GATEHOUSE_BENCH_PG_PORT", "55444"))
    with (
        tempfile.TemporaryDirectory(prefix="gatehouse-bench-workers-") as folder,
        private_postgres(port, prefix="gatehouse-bench-workers-pg-") as server,
    ):
        measure(
            worker_environment(
                Path(folder), server.url, GATEHOUSE_TOOL_MODULES="tests.benchmarks.wait_tools"
            ),
            server.data,
            arguments.runs,
            counts,
        )


if __name__ == "__main__":
    main()
