"""Runs that sleep at a delay (spec 08, section 1): the status, the wake queued for the
recorded ``wake_at``, ``409 still_sleeping`` before it, and the wake after it."""

from __future__ import annotations

import json
import re
import threading
from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from editor.drives import queue_drive
from editor.management.commands import db_worker
from editor.models import Run
from editor.store import OrmRunStore
from editor.tasks import sweep_expired_leases, wake_due_runs
from tests.integration.api.callers import Caller, bearer_caller, error_of, json_of
from tests.integration.api.running import (
    drive,
    event_count,
    events_of,
    kinds_of,
    record,
    resume,
    run_of,
    start,
    store,
)
from tests.integration.api.test_run_streams import frames

pytestmark = pytest.mark.django_db


def cooloff(seconds: int) -> dict[str, object]:
    return {
        "schema_version": 1,
        "nodes": [
            {"kind": "delay", "payload": {"id": "cooloff", "seconds": seconds}},
            {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
        ],
        "edges": [{"from": "cooloff", "to": "publish"}],
    }


@pytest.fixture
def operator_api(operator: User) -> Caller:
    return bearer_caller(operator)


def asleep_since_january(operator_api: Caller, api: Caller) -> str:
    """A run of ``cooloff`` whose recorded wait ended on 2026-01-01 (long past)."""
    run_id = start(operator_api, store(api, cooloff(5)), input={"id": 7})
    record(run_id, ("NodeEntered", {"node": "cooloff"}))
    record(
        run_id,
        ("NowObserved", {"now": "2026-01-01T00:00:00.000000Z"}),
        ("SleepStarted", {"node": "cooloff", "wake_at": "2026-01-01T00:00:05.000000Z"}),
    )
    return run_id


def test_a_run_reaching_a_delay_sleeps_holding_no_worker_with_its_wake_queued(
    api: Caller, operator_api: Caller
) -> None:
    run_id = start(operator_api, store(api, cooloff(3600)), input={"id": 7})

    assert drive(run_id) == "sleeping"

    status = run_of(operator_api, run_id)["status"]
    assert set(status) == {"state", "wake_at", "node"}
    assert (status["state"], status["node"]) == ("sleeping", "cooloff")
    assert kinds_of(operator_api, run_id)[-2:] == ["NowObserved", "SleepStarted"]
    row = Run.objects.get(pk=run_id)
    wake_at = datetime.fromisoformat(status["wake_at"].replace("Z", "+00:00"))
    assert row.wake_at == wake_at
    assert (row.lease_owner, row.lease_expires_at) == ("", None)  # no worker held
    task = DBTaskResult.objects.get(id=row.queue_task)
    assert task.run_after == wake_at  # the next drive, not before the wake
    listed = json_of(operator_api.get("/v1/runs?status=sleeping"))
    assert [item["run"] for item in listed["runs"]] == [run_id]


def test_a_resume_before_the_wake_is_409_still_sleeping_and_records_nothing(
    api: Caller, operator_api: Caller
) -> None:
    run_id = start(operator_api, store(api, cooloff(3600)), input={"id": 7})
    drive(run_id)
    before = event_count(run_id)
    wake_at = run_of(operator_api, run_id)["status"]["wake_at"]

    response = resume(operator_api, run_id, {"input": {"x": 1}})

    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "still_sleeping"
    assert error["details"]["wake_at"] == wake_at
    assert 3590 <= error["details"]["remaining_seconds"] <= 3600
    assert error["message"] == (
        f"the run sleeps until {wake_at}; {error['details']['remaining_seconds']} s remain"
    )
    assert event_count(run_id) == before


def test_an_early_drive_records_nothing(api: Caller, operator_api: Caller) -> None:
    run_id = start(operator_api, store(api, cooloff(3600)), input={"id": 7})
    drive(run_id)
    before = event_count(run_id)

    assert drive(run_id) is None  # not due: nothing to claim
    assert event_count(run_id) == before
    assert Run.objects.get(pk=run_id).state == "sleeping"


def test_a_run_past_its_wake_is_overdue_found_by_the_sweep_and_wakes_once(
    api: Caller, operator_api: Caller
) -> None:
    run_id = asleep_since_january(operator_api, api)
    status = run_of(operator_api, run_id)["status"]
    assert status["overdue"] is True
    assert status["overdue_seconds"] > 86400
    assert [run.id for run in OrmRunStore().stranded_runs(timezone.now())] == [run_id]

    assert sweep_expired_leases() == 1
    assert drive(run_id) == "completed"

    kinds = kinds_of(operator_api, run_id)
    assert kinds[-7:] == [
        "SleepCompleted",
        "NodeExited",
        "NodeEntered",
        "ToolCallRequested",
        "ToolCallCompleted",
        "NodeExited",
        "RunCompleted",
    ]
    assert kinds.count("SleepCompleted") == 1
    assert run_of(operator_api, run_id)["status"] == {"state": "completed", "output": {"id": 7}}
    assert Run.objects.get(pk=run_id).wake_at is None
    assert drive(run_id) is None  # a second waker finds nothing to do


def test_the_waker_costs_one_query_while_no_run_is_due(api: Caller, operator_api: Caller) -> None:
    run_id = start(operator_api, store(api, cooloff(3600)), input={"id": 7})
    drive(run_id)

    with CaptureQueriesContext(connection) as captured:
        assert wake_due_runs() == 0

    assert len(captured) == 1
    assert "wake_at" in captured[0]["sql"]


def test_the_waker_leaves_a_due_run_to_its_own_wake_task_while_that_task_waits(
    api: Caller, operator_api: Caller
) -> None:
    run_id = asleep_since_january(operator_api, api)
    queue_drive(run_id, datetime.fromisoformat("2026-01-01T00:00:05+00:00"))  # due, not taken yet
    tasks = DBTaskResult.objects.count()

    assert wake_due_runs() == 0

    assert DBTaskResult.objects.count() == tasks  # no second task
    assert drive(run_id) == "completed"


def test_the_waker_queues_a_due_run_whose_wake_task_was_lost_once_however_many_look(
    api: Caller, operator_api: Caller
) -> None:
    run_id = asleep_since_january(operator_api, api)
    queue_drive(run_id, datetime.fromisoformat("2026-01-01T00:00:05+00:00"))
    DBTaskResult.objects.filter(id=Run.objects.get(pk=run_id).queue_task).delete()  # lost

    assert wake_due_runs() == 1
    assert wake_due_runs() == 0  # another worker's poll a moment later: held, not queued again

    assert drive(run_id) == "completed"
    assert kinds_of(operator_api, run_id).count("SleepCompleted") == 1


def test_a_worker_looks_for_due_runs_every_wake_poll_between_its_sweeps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    enough = threading.Event()

    def called(name: str) -> Any:
        def call() -> int:
            calls.append(name)
            if calls.count("wake") >= 3:
                enough.set()
            return 0

        return call

    monkeypatch.setattr(db_worker, "sweep_expired_leases", called("sweep"))
    monkeypatch.setattr(db_worker, "wake_due_runs", called("wake"))
    sweeper = db_worker.Sweeper(3600, 0.01)
    sweeper.start()
    try:
        assert enough.wait(30), calls
    finally:
        sweeper.stop()

    assert calls[0] == "sweep"  # a sweep at start-up, which wakes the due runs too
    assert calls.count("sweep") == 1  # the next is an hour away; the waker polls meanwhile


def test_a_resume_after_the_wake_drives_the_run_on_for_operators_only(
    api: Caller, operator_api: Caller, approver: User
) -> None:
    run_id = asleep_since_january(operator_api, api)

    refused = resume(bearer_caller(approver), run_id, {})
    assert refused.status_code == 403
    response = resume(operator_api, run_id, {})
    assert response.status_code == 202
    assert response.json() == {"run": run_id, "status": "running", "outcome": "driving"}
    assert drive(run_id) == "completed"


def test_a_stream_of_a_sleeping_run_ends_with_its_sleeping_status(
    api: Caller, operator_api: Caller
) -> None:
    run_id = start(operator_api, store(api, cooloff(3600)), input={"id": 7})
    drive(run_id)

    response = operator_api.get(
        f"/v1/runs/{run_id}/events", headers={"Accept": "text/event-stream"}
    )
    sent = list(frames(iter(response.streaming_content)))

    status = run_of(operator_api, run_id)["status"]
    assert status["state"] == "sleeping"
    assert sent[-1] == {"event": "end", "data": {"status": status}}
    assert len(sent) == event_count(run_id) + 1


def test_the_run_page_says_until_when_a_run_sleeps_counting_down_in_local_time(
    api: Caller, operator_api: Caller, client: Client, operator: User
) -> None:
    run_id = start(operator_api, store(api, cooloff(3600)), input={"id": 7})
    drive(run_id)
    wake_at = run_of(operator_api, run_id)["status"]["wake_at"]
    moment = datetime.fromisoformat(wake_at.replace("Z", "+00:00"))
    client.force_login(operator)

    page = client.get(f"/runs/{run_id}/").content.decode()

    assert "◷ sleeping" in page
    assert (
        f'Sleeping until <time datetime="{moment.isoformat()}" data-local-time data-local-seconds>'
        f"{moment:%Y-%m-%d %H:%M:%S} UTC</time>"
    ) in page  # rewritten in the reader's time zone by local-time.js
    assert f'<span class="countdown" data-wake-at="{wake_at}">wakes in <strong>' in page
    assert re.search(r"wakes in <strong>(59 min [0-9]+ s|1 h)</strong>", page)
    assert "waits at <code>cooloff</code>" in page
    assert "Overdue" not in page


def test_the_run_page_says_overdue_when_the_wake_time_has_passed_without_a_wake(
    api: Caller, operator_api: Caller, client: Client, operator: User
) -> None:
    run_id = asleep_since_january(operator_api, api)
    client.force_login(operator)

    page = client.get(f"/runs/{run_id}/").content.decode()

    assert 'Sleeping until <time datetime="2026-01-01T00:00:05+00:00"' in page
    assert re.search(r'class="countdown overdue"[^>]*><strong>Overdue</strong> by [0-9]+ d', page)
    assert "no worker has woken it yet" in page


def test_the_runs_list_shows_each_sleeping_run_until_when_and_which_are_overdue(
    api: Caller, operator_api: Caller, client: Client, operator: User
) -> None:
    overdue = asleep_since_january(operator_api, api)
    asleep = start(operator_api, store(api, cooloff(3600)), input={"id": 8})
    drive(asleep)
    done = start(operator_api, store(api, cooloff(3600)), input={"id": 9})
    record(done, ("RunAbandoned", {"reason": "not needed", "by": "someone"}))
    queued = start(operator_api, store(api, cooloff(60)), input={"id": 10})
    client.force_login(operator)

    everything = client.get("/runs/").content.decode()
    sleeping = client.get("/runs/", {"state": "sleeping"}).content.decode()

    assert all(run in everything for run in (overdue, asleep, done, queued))
    rows = {run: row_of(sleeping, run) for run in (overdue, asleep, done, queued)}
    assert rows[done] is None and rows[queued] is None  # only the sleeping runs are listed
    assert "Sleeping until" in str(rows[overdue]) and "<strong>Overdue</strong>" in str(
        rows[overdue]
    )
    assert "Sleeping until" in str(rows[asleep]) and "wakes in <strong>" in str(rows[asleep])
    assert "Overdue" not in str(rows[asleep])
    assert "js/countdown.js" in sleeping


def row_of(page: str, run_id: str) -> str | None:
    """The runs list's table row of this run, as HTML text."""
    for row in re.findall(r"<tr>.*?</tr>", page, flags=re.DOTALL):
        if f'value="{run_id}"' in row:
            return str(row)
    return None


@pytest.mark.django_db(transaction=True)
def test_a_worker_started_after_the_wake_finds_the_sleeping_run_and_completes_it(
    api: Caller, operator_api: Caller
) -> None:
    # Nothing of the sleep lives in a process: a worker that was not running when the run
    # went to sleep (every process restarted) wakes it from the database alone.
    run_id = asleep_since_january(operator_api, api)

    call_command("db_worker", batch=True, no_startup_delay=True, reload=False)

    assert run_of(operator_api, run_id)["status"] == {"state": "completed", "output": {"id": 7}}
    assert kinds_of(operator_api, run_id).count("SleepCompleted") == 1


def test_the_run_node_page_of_a_sleeping_delay_answers(
    api: Caller, operator_api: Caller, client: Client, operator: User
) -> None:
    run_id = start(operator_api, store(api, cooloff(3600)), input={"id": 7})
    drive(run_id)
    client.force_login(operator)

    response = client.get(f"/runs/{run_id}/node/?node=cooloff")

    assert response.status_code == 200
    assert "cooloff" in response.content.decode()


def test_wake_now_ends_the_wait_early_recording_who_and_drives_on(
    api: Caller, operator_api: Caller, operator: User, approver: User
) -> None:
    run_id = start(operator_api, store(api, cooloff(3600)), input={"id": 7})
    drive(run_id)

    refused = bearer_caller(approver).post(
        f"/v1/runs/{run_id}/wake", {"comment": "now"}, content_type="application/json"
    )
    assert refused.status_code == 403
    response = operator_api.post(
        f"/v1/runs/{run_id}/wake", {"comment": "the desk said go"}, content_type="application/json"
    )
    assert response.status_code == 202
    assert response.json() == {"run": run_id, "status": "running", "outcome": "driving"}
    assert drive(run_id) == "completed"
    woken = [e for e in events_of(operator_api, run_id) if e["event"]["kind"] == "SleepCompleted"]
    assert [e["event"]["payload"] for e in woken] == [
        {"node": "cooloff", "by": operator.get_username(), "comment": "the desk said go"}
    ]

    again = operator_api.post(f"/v1/runs/{run_id}/wake", {}, content_type="application/json")
    assert again.status_code == 409
    assert error_of(again)["code"] == "wrong_state"


def test_a_sleeping_run_is_nobodys_task_in_the_inbox(api: Caller, operator_api: Caller) -> None:
    run_id = start(operator_api, store(api, cooloff(3600)), input={"id": 7})
    drive(run_id)

    inbox = json_of(operator_api.get("/v1/inbox"))

    assert run_id not in json.dumps(inbox)


def test_the_run_page_counts_down_to_the_wake_and_offers_operators_wake_now(
    api: Caller, operator_api: Caller, client: Client, operator: User, approver: User
) -> None:
    run_id = start(operator_api, store(api, cooloff(3600)), input={"id": 7})
    drive(run_id)
    wake_at = run_of(operator_api, run_id)["status"]["wake_at"]

    client.force_login(approver)
    seen_by_approver = client.get(f"/runs/{run_id}/").content.decode()
    assert f'data-wake-at="{wake_at}"' in seen_by_approver  # the countdown, for everyone
    assert "js/countdown.js" in seen_by_approver
    assert "Wake now" not in seen_by_approver
    assert client.post(f"/runs/{run_id}/wake/").status_code == 403

    client.force_login(operator)
    page = client.get(f"/runs/{run_id}/").content.decode()
    assert f'action="/runs/{run_id}/wake/"' in page
    response = client.post(f"/runs/{run_id}/wake/")
    assert response.status_code == 302
    assert response["Location"] == f"/runs/{run_id}/"
    woken = [e for e in events_of(operator_api, run_id) if e["event"]["kind"] == "SleepCompleted"]
    assert [e["event"]["payload"] for e in woken] == [
        {"node": "cooloff", "by": operator.get_username()}
    ]
    assert drive(run_id) == "completed"

    late = client.post(f"/runs/{run_id}/wake/")
    assert late.status_code == 409
    assert "Not woken: the run is not sleeping" in late.content.decode()


def test_forking_a_sleeping_run_from_a_node_behind_its_delay_is_400_invalid_fork_node(
    api: Caller, operator_api: Caller
) -> None:
    origin = start(operator_api, store(api, cooloff(3600)), input={"id": 7})
    drive(origin)
    runs_before = Run.objects.count()

    for body in ({"from_node": "publish", "dry_run": True}, {"from_node": "publish"}):
        refused = operator_api.post(f"/v1/runs/{origin}/fork", body)
        assert refused.status_code == 400
        assert error_of(refused)["code"] == "invalid_fork_node"
        assert "never entered node `publish`" in error_of(refused)["message"]
    assert Run.objects.count() == runs_before
    assert run_of(operator_api, origin)["status"]["state"] == "sleeping"  # the origin sleeps on


def test_a_fork_from_the_sleeping_delay_itself_waits_afresh_on_its_own_clock(
    api: Caller, operator_api: Caller
) -> None:
    origin = start(operator_api, store(api, cooloff(3600)), input={"id": 7})
    drive(origin)

    made = operator_api.post(f"/v1/runs/{origin}/fork", {"from_node": "cooloff"})

    assert made.status_code == 201, made.content
    child = made.json()["run"]
    assert drive(child) == "sleeping"

    def observed(run_id: str) -> list[str]:
        events = events_of(operator_api, run_id)
        return [e["event"]["payload"]["now"] for e in events if e["event"]["kind"] == "NowObserved"]

    (origin_now,) = observed(origin)
    (child_now,) = observed(child)  # its own clock read, not the origin's copied
    assert child_now > origin_now
    origin_wake = run_of(operator_api, origin)["status"]["wake_at"]
    assert run_of(operator_api, child)["status"]["wake_at"] > origin_wake  # the full hour again
    assert run_of(operator_api, origin)["status"]["state"] == "sleeping"


def test_a_wake_resolves_names_again_and_fails_the_run_when_one_no_longer_resolves(
    api: Caller, operator_api: Caller, settings: Any
) -> None:
    from editor.services.installation import tools

    settings.GATEHOUSE_TOOL_MODULES = ["tests.integration.runs.fork_tools"]
    tools.cache_clear()
    try:
        graph = json.loads(json.dumps(cooloff(5)))
        graph["nodes"][1]["payload"]["tool"] = "counted"
        run_id = start(operator_api, store(api, graph), input={"id": 7})
        record(run_id, ("NodeEntered", {"node": "cooloff"}))
        record(
            run_id,
            ("NowObserved", {"now": "2026-01-01T00:00:00.000000Z"}),
            ("SleepStarted", {"node": "cooloff", "wake_at": "2026-01-01T00:00:05.000000Z"}),
        )
        # The installation changed while the run slept: its tool is no longer registered.
        settings.GATEHOUSE_TOOL_MODULES = []
        tools.cache_clear()

        assert drive(run_id) == "failed"
    finally:
        tools.cache_clear()

    status = run_of(operator_api, run_id)["status"]
    assert status["state"] == "failed"
    assert "`counted`" in status["error"]
    kinds = kinds_of(operator_api, run_id)
    assert "SleepCompleted" not in kinds
    assert kinds[-1] == "RunFailed"
    assert Run.objects.get(pk=run_id).wake_at is None


def test_an_operator_abandons_a_sleeping_run_over_http_and_its_wake_records_nothing(
    api: Caller, operator_api: Caller, approver: User
) -> None:
    run_id = start(operator_api, store(api, cooloff(3600)), input={"id": 7})
    drive(run_id)
    url = f"/v1/runs/{run_id}/abandon"

    refused = bearer_caller(approver).post(url, {"reason": "no"})
    assert refused.status_code == 403
    response = operator_api.post(url, {"reason": "the notice was withdrawn"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body == {
        "run": run_id,
        "abandoned": True,
        "appended_seq": event_count(run_id) - 1,
        "status": {"state": "abandoned", "reason": "the notice was withdrawn"},
    }
    kinds = kinds_of(operator_api, run_id)
    assert kinds[-1] == "RunAbandoned" and "SleepCompleted" not in kinds
    # The wake queued for wake_at comes to a finished run: nothing to claim, nothing recorded.
    Run.objects.filter(pk=run_id).update(wake_at=timezone.now())
    assert drive(run_id) is None
    assert wake_due_runs() == 0
    assert kinds_of(operator_api, run_id) == kinds
    again = operator_api.post(url, {"reason": "twice"})
    assert again.status_code == 409
    assert error_of(again)["code"] == "wrong_state"
