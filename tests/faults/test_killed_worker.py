"""A worker killed with ``kill -9`` in the middle of a run, on PostgreSQL: another worker takes
the run over once its lease runs out, and the run completes with nothing lost or repeated."""

from __future__ import annotations

from pathlib import Path

from tests.faults.processes import (
    Api,
    PrivatePostgres,
    Processes,
    assert_log_is_whole,
    one_tool,
    run_events,
    run_state,
    wait_until,
)


def test_a_run_whose_worker_was_killed_completes_on_another_worker_with_a_whole_log(
    postgres: PrivatePostgres, processes: Processes, token: str, tmp_path: Path
) -> None:
    api = Api(processes.server(workers=1), token)
    graph = api.store_graph(one_tool("hold"))
    first = processes.worker()
    calls, release = tmp_path / "calls", tmp_path / "release"
    run_id = api.start_run(graph, {"release": str(release), "calls": str(calls)})

    wait_until(calls.exists, "the tool was called")
    first.kill()  # SIGKILL: no clean-up; the run's lease is left to run out
    first.wait()
    release.touch()
    processes.worker()

    wait_until(lambda: run_state(postgres, run_id) == "completed", "the run completed")
    log = run_events(postgres, run_id)
    assert_log_is_whole(log)
    assert [kind for _, kind, _ in log] == [
        "GraphRunStarted",
        "NodeEntered",
        "ToolCallRequested",
        "ToolCallCompleted",
        "NodeExited",
        "NodeEntered",
        "ToolCallRequested",
        "ToolCallCompleted",
        "NodeExited",
        "RunCompleted",
    ]
    # The interrupted call was made again by the second worker, with the same idempotency key.
    keys = calls.read_text().split()
    assert len(keys) == 2
    assert keys[0] == keys[1]
    assert api.request("GET", f"/runs/{run_id}").json()["status"]["state"] == "completed"
