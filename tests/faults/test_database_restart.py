"""PostgreSQL restarted (``pg_ctl stop -m fast``, then start) while runs and draft edits are in
flight, against gunicorn and two ``db_worker`` processes.

Runs started before and during the outage finish (the ones whose worker lost the database are
reclaimed once their lease runs out) with logs that have no gap and no repeat. Every draft edit
the API acknowledged is kept (or replaced by a later acknowledged one); while the database is
down the API answers ``503 unavailable`` in its envelope and a page answers a plain error page.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

import requests

from tests.faults.processes import (
    Api,
    PrivatePostgres,
    Processes,
    assert_log_is_whole,
    one_tool,
    run_events,
    run_state,
    signed_in,
    wait_until,
)

ECHO_CHAIN = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "first", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "second", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "third", "tool": "echo"}},
    ],
    "edges": [{"from": "first", "to": "second"}, {"from": "second", "to": "third"}],
}


def draft_text(number: int) -> str:
    """The text of the ``number``-th edit: a small valid document naming its edit."""
    return json.dumps(
        {
            "schema_version": 1,
            "nodes": [{"kind": "tool", "payload": {"id": f"edit{number}", "tool": "echo"}}],
            "edges": [],
        }
    )


def is_unavailable(response: requests.Response) -> bool:
    """The API's answer while the database is down: ``503`` with the ``unavailable`` code."""
    return response.status_code == 503 and response.json()["error"]["code"] == "unavailable"


@dataclass
class Traffic:
    """What the editing and run-starting clients sent and were answered."""

    acknowledged_edits: list[tuple[int, str]] = field(default_factory=list)
    started_runs: list[str] = field(default_factory=list)
    unavailable: int = 0
    unexpected: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, response: requests.Response) -> None:
        with self.lock:
            if is_unavailable(response):
                self.unavailable += 1
            else:
                self.unexpected.append(f"{response.status_code} {response.text[:300]}")


def edit_drafts(api: Api, slug: str, revision: int, traffic: Traffic) -> None:
    """One author saving the draft again and again with ``If-Match``, as the editor does."""
    number = 0
    while not traffic.stop.is_set():
        number += 1
        text = draft_text(number)
        saved = api.request(
            "PUT",
            f"/documents/{slug}/draft",
            json={"text": text},
            headers={"If-Match": f'"{revision}"'},
        )
        if saved.status_code == 200:
            revision = saved.json()["revision"]
            with traffic.lock:
                traffic.acknowledged_edits.append((revision, text))
        elif saved.status_code == 412:
            # Stale: an edit may have been stored without its answer reaching the client (the
            # database went away after the commit). Read the draft again, as the editor does.
            current = api.request("GET", f"/documents/{slug}/draft")
            if current.status_code == 200:
                revision = current.json()["revision"]
            else:
                traffic.note(current)
        else:
            traffic.note(saved)
        traffic.stop.wait(0.02)


def start_runs(api: Api, graph: str, traffic: Traffic) -> None:
    while not traffic.stop.is_set():
        started = api.request("POST", "/graph-runs", json={"graph_hash": graph, "input": {}})
        if started.status_code == 201:
            with traffic.lock:
                traffic.started_runs.append(started.json()["run"])
        else:
            traffic.note(started)
        traffic.stop.wait(0.1)


def test_runs_and_draft_edits_survive_a_database_restart_and_clients_get_clear_errors(
    postgres: PrivatePostgres, processes: Processes, token: str, tmp_path: Path
) -> None:
    server = processes.server(workers=2)
    workers = [processes.worker(), processes.worker()]
    api = Api(server, token)
    browser = signed_in(server.url)
    created = api.request("POST", "/documents", json={"title": "Restart", "text": draft_text(0)})
    assert created.status_code == 201, created.text
    slug = created.json()["slug"]
    revision = api.request("GET", f"/documents/{slug}/draft").json()["revision"]
    echo_chain = api.store_graph(ECHO_CHAIN)

    # In flight across the restart: one worker is in the middle of a run whose tool waits for
    # a file; the other drives the short runs the clients start, and polls the queue.
    calls, release = tmp_path / "calls", tmp_path / "release"
    holding = api.store_graph(one_tool("hold"))
    held = api.start_run(holding, {"release": str(release), "calls": str(calls)})
    wait_until(calls.exists, "the held run's tool was called")

    traffic = Traffic()
    clients = [
        threading.Thread(target=edit_drafts, args=(api, slug, revision, traffic)),
        threading.Thread(target=start_runs, args=(api, echo_chain, traffic)),
    ]
    for client in clients:
        client.start()
    try:
        wait_until(
            lambda: len(traffic.acknowledged_edits) >= 5 and len(traffic.started_runs) >= 3,
            "edits were saved and runs started before the restart",
        )
        postgres.stop()
        try:
            # While the database is down: the API's envelope, and a plain page, no traceback.
            answer = api.request("GET", f"/documents/{slug}/draft")
            assert is_unavailable(answer), answer.text
            assert "Traceback" not in answer.text
            page = browser.get(f"{server.url}/graphs/{slug}/", timeout=30)
            assert page.status_code == 503, page.text[:500]
            assert "Traceback" not in page.text
            assert "OperationalError" not in page.text
            wait_until(lambda: traffic.unavailable >= 2, "the clients were told it is down")
        finally:
            postgres.start()
        release.touch()
        edits_before, runs_before = len(traffic.acknowledged_edits), len(traffic.started_runs)
        wait_until(
            lambda: (
                len(traffic.acknowledged_edits) >= edits_before + 5
                and len(traffic.started_runs) >= runs_before + 3
            ),
            "edits were saved and runs started after the restart",
        )
    finally:
        traffic.stop.set()
        for client in clients:
            client.join()

    assert traffic.unexpected == []
    # Every run, started before, during or after the outage, finishes with a whole log.
    for run_id in [held, *traffic.started_runs]:
        wait_until(lambda run_id=run_id: run_state(postgres, run_id) == "completed", "runs ended")
        assert_log_is_whole(run_events(postgres, run_id))
    # No acknowledged edit is lost: each was stored at a later revision than the one before,
    # and the draft is the last one acknowledged.
    revisions = [revision for revision, _ in traffic.acknowledged_edits]
    assert revisions == sorted(set(revisions))
    with postgres.connect() as connection:
        stored = connection.execute(
            "SELECT d.revision, d.text FROM editor_draft d JOIN editor_document doc "
            "ON d.document_id = doc.id WHERE doc.slug = %s",
            (slug,),
        ).fetchone()
    assert stored == traffic.acknowledged_edits[-1]
    # The workers rode out the outage.
    assert [worker.poll() for worker in workers] == [None, None]
    assert server.healthy()


def test_an_idle_worker_rides_out_a_database_restart_and_drives_the_next_run(
    postgres: PrivatePostgres, processes: Processes, token: str
) -> None:
    api = Api(processes.server(workers=1), token)
    graph = api.store_graph(ECHO_CHAIN)
    worker = processes.worker()
    log = processes.logs[worker.pid]
    wait_until(lambda: "Starting worker" in log.read_text(), "the worker polled the queue")

    postgres.stop()
    try:
        wait_until(
            lambda: worker.poll() is not None or "the worker lost the database" in log.read_text(),
            "the worker noticed the database was gone",
        )
        assert worker.poll() is None, "the worker exited: " + log.read_text()[-2000:]
    finally:
        postgres.start()

    run_id = api.start_run(graph, {})
    wait_until(lambda: run_state(postgres, run_id) == "completed", "the run completed")
    assert_log_is_whole(run_events(postgres, run_id))
    assert worker.poll() is None
