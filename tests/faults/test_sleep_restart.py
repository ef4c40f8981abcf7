"""A run through a two-second delay while every process is restarted (spec 08, issue 23's
*Done when*): it sleeps holding no process, a resume before the wake is ``409
still_sleeping``, and after the server and the worker are both killed and started afresh it
wakes exactly once, never before its ``wake_at``, and completes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tests.faults.processes import (
    Api,
    PrivatePostgres,
    Processes,
    assert_log_is_whole,
    run_events,
    run_state,
    wait_until,
)

COOLOFF = {
    "schema_version": 1,
    "nodes": [
        {"kind": "delay", "payload": {"id": "cooloff", "seconds": 2}},
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "cooloff", "to": "publish"}],
}


#: The sweep as deployed (the other fault tests sweep every second to reclaim killed workers'
#: runs quickly): the wake must not depend on the sweep, only on the wake task and the waker.
DEFAULT_SWEEP = {"GATEHOUSE_SWEEP_SECONDS": "10"}


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_sleeping_run_survives_a_restart_of_every_process_and_wakes_once_never_early(
    postgres: PrivatePostgres, processes: Processes, token: str, tmp_path: Path
) -> None:
    server = processes.server(workers=1)
    api = Api(server, token)
    graph = api.store_graph(COOLOFF)
    worker = processes.worker(DEFAULT_SWEEP)
    run_id = api.start_run(graph, {"notice": 7})

    wait_until(lambda: run_state(postgres, run_id) == "sleeping", "the run slept")
    early = api.request("POST", f"/runs/{run_id}/resume", json={"input": {"x": 1}})
    assert early.status_code == 409, early.text
    assert early.json()["error"]["code"] == "still_sleeping"

    # Every process goes, with no clean-up, while the run sleeps; new ones start.
    for process in (worker, server.process):
        process.kill()
        process.wait()
    restarted = processes.worker(DEFAULT_SWEEP)  # first: the wake is the worker's
    log_of_worker = processes.logs[restarted.pid]
    wait_until(lambda: "Starting worker" in log_of_worker.read_text(), "the new worker started")
    ready = datetime.now(UTC)
    api = Api(processes.server(workers=1), token)

    wait_until(lambda: run_state(postgres, run_id) == "completed", "the run completed")
    log = run_events(postgres, run_id)
    assert_log_is_whole(log)
    kinds = [kind for _, kind, _ in log]
    assert kinds.count("SleepStarted") == 1
    assert kinds.count("SleepCompleted") == 1
    (wake_at,) = [payload["wake_at"] for _, kind, payload in log if kind == "SleepStarted"]
    with postgres.connect() as connection:
        row = connection.execute(
            "SELECT recorded_at FROM editor_runevent WHERE run_id = %s AND kind = %s",
            (run_id, "SleepCompleted"),
        ).fetchone()
    assert row is not None
    (woken,) = row
    assert instant(str(woken)) >= instant(wake_at)  # never early
    # A loaded machine may take longer to start a worker than the two-second wait: the
    # latency that says how prompt the wake is counts from the later of the two.
    due = max(instant(wake_at), ready)
    print(
        f"woken {(instant(str(woken)) - instant(wake_at)).total_seconds():.3f} s after wake_at, "
        f"{(instant(str(woken)) - due).total_seconds():.3f} s after it was due with a worker ready"
    )
    status = api.request("GET", f"/runs/{run_id}").json()["status"]
    assert status == {"state": "completed", "output": {"notice": 7}}
