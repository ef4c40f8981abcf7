"""The payroll example's fan-out on real workers (``make bench-workers``): its ``map`` over a
roster of 200 employees, each payment a call to the example's own MCP server, with 1 and 4
``db_worker`` processes on a private PostgreSQL server.

The graph is the reference's ``payroll/payroll-run.json`` without its closing agent (the map is
what is measured; the agent's two model calls would measure a model). The roster file the
example's server reads (``SALVOR_PAYROLL_ROSTER``) holds one clean pay period per run (no
amount far off the median, so the branch takes ``pay_all`` and no gate parks), ``--employees``
rows each. For each number of workers, ``--runs`` runs are started and queued first, then the
workers are started (as ``scale_workers.py`` starts them); the throughput is the runs completed
divided by the time from the first event a worker recorded to the last. Then every run is
checked (completed, one ``pay_employee`` call per employee, one ``MapIterationJoined`` each) and
the round's own ledger: exactly one line per employee and run, **no duplicate key**.

PostgreSQL is ``tests/private_postgres.py``'s cluster (``initdb`` in a temporary folder, loopback
port ``GATEHOUSE_BENCH_PG_PORT``, default 55444). Options: ``--runs N`` (default 8),
``--employees N`` (default 200), ``--workers 1,4``. Needs the reference's examples beside the
checkout (``tests/reference_examples.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_workers import cpu_seconds, environment, moment, stop, workers  # noqa: E402

from tests.private_postgres import postgres_available, private_postgres  # noqa: E402
from tests.reference_examples import EXAMPLES  # noqa: E402

PAYROLL = EXAMPLES / "payroll"
#: Seconds a round may take before the benchmark gives up (a hang, not slowness).
BOUND = 1800.0


def payroll_map_graph() -> dict[str, Any]:
    """``payroll-run.json`` without ``notify_summary``, the agent after the map."""
    graph = json.loads((PAYROLL / "payroll-run.json").read_text(encoding="utf-8"))
    graph["nodes"] = [node for node in graph["nodes"] if node["kind"] != "agent"]
    graph["edges"] = [edge for edge in graph["edges"] if edge["to"] != "notify_summary"]
    return graph


def roster(periods: list[str], employees: int) -> dict[str, list[dict[str, Any]]]:
    """Clean rosters: every amount between 400,000 and 520,000 cents, none flagged."""
    rows = [
        {"id": f"E{n:04d}", "name": f"Employee {n}", "amount_cents": 400_000 + (n * 7919) % 120_000}
        for n in range(1, employees + 1)
    ]
    return {period: rows for period in periods}


def catalogue(folder: Path, roster_file: Path) -> Path:
    """The example's server as its agent file names it, with this round's ledger; no
    ``idempotency_keys``, as in the example (the server keys each payment itself)."""
    path = folder / "mcp-servers.toml"
    path.write_text(
        f'[servers.payroll]\ncommand = "{sys.executable}"\nargs = ["{PAYROLL / "server.py"}"]\n'
        f'env = {{ SALVOR_PAYROLL_ROSTER = "{roster_file}", '
        f'SALVOR_PAYROLL_LEDGER = "{folder / "ledger.txt"}", '
        f'SALVOR_PAYROLL_NOTICES = "{folder / "notices.json"}" }}\n',
        encoding="utf-8",
    )
    return path


def wait_until_done(ids: list[str], bound: float) -> None:
    from editor.models import Run

    deadline = time.monotonic() + bound
    while True:
        states = Counter(Run.objects.filter(id__in=ids).values_list("state", flat=True))
        if states.get("completed", 0) == len(ids):
            return
        stuck = {state: n for state, n in states.items() if state not in ("completed", "queued")}
        stuck.pop("running", None)
        assert not stuck, f"runs that will not complete: {stuck}"
        assert time.monotonic() < deadline, f"still not completed: {dict(states)}"
        time.sleep(0.2)


def check(ids: list[str], employees: int, ledger: Path) -> tuple[float, int]:
    """Every run paid each employee once, and the ledger holds each payment once; (seconds from
    the first event a worker recorded to the last, ledger lines)."""
    from editor.models import RunEvent

    first, last = None, None
    calls: Counter[str] = Counter()
    joins: Counter[str] = Counter()
    rows = RunEvent.objects.filter(run_id__in=ids).exclude(kind="GraphRunStarted")
    for run_id, kind, payload, recorded in rows.values_list(
        "run_id", "kind", "payload", "recorded_at"
    ):
        at = moment(recorded)
        first = at if first is None or at < first else first
        last = at if last is None or at > last else last
        if kind == "ToolCallRequested" and payload.get("tool") == "pay_employee":
            calls[str(run_id)] += 1
        elif kind == "MapIterationJoined":
            joins[str(run_id)] += 1
    wrong = {run: n for run, n in calls.items() if n != employees}
    assert len(calls) == len(ids) and not wrong, f"pay_employee calls per run: {wrong or calls}"
    assert all(joins[run] == employees for run in ids), f"iterations joined: {joins}"
    keys = [json.loads(line)["key"] for line in ledger.read_text().splitlines()]
    duplicates = [key for key, n in Counter(keys).items() if n > 1]
    assert not duplicates, f"{len(duplicates)} duplicate ledger lines, e.g. {duplicates[0]}"
    assert len(keys) == len(ids) * employees, f"{len(keys)} ledger lines"
    assert first is not None and last is not None
    return (last - first).total_seconds(), len(keys)


def measure(folder: Path, url: str, runs: int, employees: int, counts: list[int]) -> None:
    env = environment(folder, url)
    # This process starts the runs, and a run's tools are resolved when it starts: it lists the
    # server too (the listing reads no ledger).
    listing = folder / "listing"
    listing.mkdir()
    env["GATEHOUSE_MCP_SERVERS"] = str(catalogue(listing, listing / "roster.json"))
    os.environ.update(env)
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.db import connection

    from editor.services import runs as run_service
    from editor.services.documents import graphs

    call_command("migrate", verbosity=0, interactive=False)
    operator = User.objects.create_user("operator", password="benchmark-password-1")
    operator.groups.set(Group.objects.all())
    digest = graphs.store_graph(operator, json.dumps(payroll_map_graph())).graph
    print(
        f"payroll fan-out on PostgreSQL: {runs} runs a round, each a map over {employees} "
        f"employees paid through the example's MCP server; {os.cpu_count()} cores"
    )
    print(
        f"  {'workers':>7} {'runs/s':>8} {'payments/s':>11} {'seconds':>8} "
        f"{'worker CPU':>11}  checked"
    )
    for count in counts:
        round_folder = folder / f"workers-{count}"
        round_folder.mkdir()
        periods = [f"bench-{count}w-{n:03d}" for n in range(runs)]
        roster_file = round_folder / "roster.json"
        roster_file.write_text(json.dumps(roster(periods, employees)), encoding="utf-8")
        round_env = {**env, "GATEHOUSE_MCP_SERVERS": str(catalogue(round_folder, roster_file))}
        ids = [
            run_service.start_run(operator, digest, {"pay_period": period}).run
            for period in periods
        ]
        connection.close()
        processes = workers(count, round_env)
        try:
            wait_until_done(ids, BOUND)
            worker_cpu = sum(cpu_seconds(process.pid) for process in processes)
        finally:
            stop(processes)
        seconds, lines = check(ids, employees, round_folder / "ledger.txt")
        print(
            f"  {count:>7} {runs / seconds:8.2f} {runs * employees / seconds:11.1f} "
            f"{seconds:8.1f} {worker_cpu * 1000 / lines:8.1f} ms  every run completed, "
            f"{lines} ledger lines, no duplicate",
            flush=True,
        )
    print(
        "  (worker CPU: the db_worker processes' own, a payment; not the servers' nor PostgreSQL's)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--employees", type=int, default=200)
    parser.add_argument("--workers", default="1,4")
    arguments = parser.parse_args()
    counts = [int(count) for count in arguments.workers.split(",")]
    if not postgres_available():
        print("-- skipped: no PostgreSQL server binaries here")
        return
    if not (PAYROLL / "server.py").exists():
        print(f"-- skipped: the reference's examples are not at {EXAMPLES}")
        return
    port = int(os.environ.get("GATEHOUSE_BENCH_PG_PORT", "55444"))
    with (
        tempfile.TemporaryDirectory(prefix="gatehouse-bench-payroll-") as folder,
        private_postgres(port, prefix="gatehouse-bench-payroll-pg-") as server,
    ):
        measure(Path(folder), server.url, arguments.runs, arguments.employees, counts)


if __name__ == "__main__":
    main()
