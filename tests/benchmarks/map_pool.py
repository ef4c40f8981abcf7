"""Benchmark of a wide map on a real worker (spec 04, *map*; GATEHOUSE_RUN_MAP_CONCURRENCY).

A run of one map over 10,000 items of an ``echo`` tool, whose node asks for all 10,000 at once
(what a hostile author writes), is driven by a real ``manage.py db_worker --batch`` process on a
throwaway SQLite database (WAL, as ``make run`` uses it) with the installation's cap at its
default, 16. The benchmark samples the worker's ``/proc/<pid>/status`` every 20 ms and reports
the peak of its threads, its open files and its resident memory (``VmHWM``), the time the
drive took and the events it recorded.

Run it with ``make bench`` (or ``python tests/benchmarks/map_pool.py``). Linux only (``/proc``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from django_setup import setup_django  # noqa: E402  (this folder, on sys.path when run)

ITEMS = 10_000
CAP = 16
SAMPLE_SECONDS = 0.02


def wide_map() -> dict:
    return {
        "schema_version": 1,
        "nodes": [
            {
                "kind": "map",
                "payload": {
                    "id": "m",
                    "over": "items",
                    "concurrency": ITEMS,
                    "body": {"kind": "node", "value": "each"},
                },
            },
            {"kind": "tool", "payload": {"id": "each", "tool": "echo"}},
        ],
        "edges": [],
    }


def status_fields(pid: int) -> dict[str, int]:
    fields = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("Threads", "VmHWM", "VmRSS"):
                fields[name] = int(value.split()[0])
    fields["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return fields


def main() -> None:
    directory = Path(tempfile.mkdtemp(prefix="gatehouse-map-bench-"))
    setup_django(directory, database="map.sqlite3")
    from editor.models import Run, RunEvent
    from editor.tasks import drive_run
    from tests.integration.runs.starting import start

    run_id = start(wide_map(), {"items": list(range(ITEMS))})
    drive_run.enqueue(run_id)
    env = {**os.environ, "GATEHOUSE_RUN_MAP_CONCURRENCY": str(CAP)}
    command = [sys.executable, "manage.py", "db_worker", "--batch", "--no-reload"]
    command += ["--no-startup-delay"]
    began = time.perf_counter()
    worker = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    peak: dict[str, int] = {"Threads": 0, "VmHWM": 0, "VmRSS": 0, "fds": 0}
    while worker.poll() is None:
        try:
            fields = status_fields(worker.pid)
        except (FileNotFoundError, ProcessLookupError):
            break
        for name, value in fields.items():
            peak[name] = max(peak[name], value)
        time.sleep(SAMPLE_SECONDS)
    worker.wait()
    elapsed = time.perf_counter() - began
    run = Run.objects.get(pk=run_id)
    events = RunEvent.objects.filter(run=run).count()
    output = run.status.get("output")
    assert run.state == "completed", run.status
    assert output == list(range(ITEMS))
    print(f"a map of {ITEMS:,} echo items asking for {ITEMS:,} at once, cap {CAP} (SQLite, WAL)")
    print(f"  worker process: {elapsed:.1f} s for the batch, {events:,} events")
    print(f"  peak threads {peak['Threads']}, open files {peak['fds']}")
    print(f"  peak resident memory (VmHWM) {peak['VmHWM'] / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
