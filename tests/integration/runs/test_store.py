"""The ORM run store: appends are atomic and guarded, and the lease keeps one driver per run."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from editor.engine import AppendRefused, Envelope, RunLost, prepare_abandon, run_status
from editor.models import Run, RunEvent
from editor.store import OrmRunStore
from tests.integration.runs.starting import ECHO_CHAIN, kinds, start, stored

pytestmark = pytest.mark.django_db

AT = "2026-11-30T00:00:00.000000Z"


def next_events(store: OrmRunStore, run_id: str, *events: tuple[str, dict[str, Any]]) -> tuple:
    """``events`` as envelopes continuing the log, and the status they lead to."""
    existing = store.load_run(run_id).events
    envelopes = [
        Envelope(run_id, len(existing) + offset, AT, kind, payload)
        for offset, (kind, payload) in enumerate(events)
    ]
    return envelopes, run_status([*existing, *envelopes])


def entered(node: str = "first") -> tuple[str, dict[str, Any]]:
    return ("NodeEntered", {"node": node})


def test_a_started_run_reads_back_as_its_log_and_its_graph() -> None:
    run_id = start(ECHO_CHAIN, {"topic": "tea"})
    store = OrmRunStore()

    record = store.load_run(run_id)

    assert record.run_id == run_id
    assert record.graph_hash == stored(ECHO_CHAIN)
    assert record.input == {"topic": "tea"}
    assert [(envelope.seq, envelope.kind) for envelope in record.events] == [(0, "GraphRunStarted")]
    assert store.load_graph(record.graph_hash).startswith(b"{")
    assert store.load_graph("sha256:" + "0" * 64) is None


def test_loading_a_run_that_does_not_exist_says_it_is_lost() -> None:
    store = OrmRunStore()

    with pytest.raises(RunLost):
        store.load_run("0c1a41e8-9d0f-4a47-9d80-8a8c4e1f2b3c")
    with pytest.raises(RunLost):
        store.load_run("not-a-run-id")


def test_the_lease_holder_appends_and_the_run_takes_the_state_of_its_log() -> None:
    run_id = start(ECHO_CHAIN)
    store = OrmRunStore("worker-a", lease_seconds=30)
    assert store.claim(run_id)

    events, status = next_events(store, run_id, entered())
    store.append(run_id, events, status)

    run = Run.objects.get(pk=run_id)
    assert run.state == "running"
    assert run.status == {"state": "running"}
    assert run.event_count == 2
    assert run.lease_owner == "worker-a"
    assert run.lease_expires_at > timezone.now() + timedelta(seconds=20)
    assert kinds(run_id) == ["GraphRunStarted", "NodeEntered"]


def test_a_parked_run_records_when_it_parked() -> None:
    run_id = start(ECHO_CHAIN)
    store = OrmRunStore("worker-a")
    store.claim(run_id)
    suspended = (
        "Suspended",
        {"node": "first", "reason": "approve?", "input_schema": {}, "value": None},
    )

    events, status = next_events(store, run_id, entered(), suspended)
    store.append(run_id, events, status)

    run = Run.objects.get(pk=run_id)
    assert run.state == "suspended"
    assert run.parked_at is not None


def test_a_second_worker_cannot_claim_a_run_another_one_drives() -> None:
    run_id = start(ECHO_CHAIN)
    first, second = OrmRunStore("worker-a"), OrmRunStore("worker-b")

    assert first.claim(run_id)
    assert not second.claim(run_id)
    assert first.claim(run_id)  # claiming again is harmless for the holder

    events, status = next_events(second, run_id, entered())
    with pytest.raises(RunLost, match="no longer leased"):
        second.append(run_id, events, status)
    assert kinds(run_id) == ["GraphRunStarted"]


def test_a_worker_takes_over_a_run_whose_lease_ran_out_and_the_old_holder_is_shut_out() -> None:
    run_id = start(ECHO_CHAIN)
    old, new = OrmRunStore("worker-a"), OrmRunStore("worker-b")
    assert old.claim(run_id)
    Run.objects.filter(pk=run_id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))

    assert new.claim(run_id)
    assert not old.renew(run_id)
    events, status = next_events(old, run_id, entered())
    with pytest.raises(RunLost):
        old.append(run_id, events, status)

    new.append(run_id, events, status)
    assert kinds(run_id) == ["GraphRunStarted", "NodeEntered"]
    assert Run.objects.get(pk=run_id).lease_owner == "worker-b"


def test_an_append_after_an_abandon_is_refused_and_writes_nothing() -> None:
    run_id = start(ECHO_CHAIN)
    driver, service = OrmRunStore("worker-a"), OrmRunStore()
    driver.claim(run_id)
    stale_events, stale_status = next_events(driver, run_id, entered())
    abandoned, status = prepare_abandon(
        service.load_run(run_id), "not needed", "ada", timezone.now()
    )
    service.record(run_id, abandoned, status)

    with pytest.raises(RunLost):
        driver.append(run_id, stale_events, stale_status)

    run = Run.objects.get(pk=run_id)
    assert run.state == "abandoned"
    assert run.event_count == 2
    assert kinds(run_id) == ["GraphRunStarted", "RunAbandoned"]


def test_nothing_is_recorded_after_a_run_has_finished() -> None:
    run_id = start(ECHO_CHAIN)
    store = OrmRunStore()
    abandoned, status = prepare_abandon(store.load_run(run_id), None, "ada", timezone.now())
    store.record(run_id, abandoned, status)

    events, status = next_events(store, run_id, entered())
    with pytest.raises(RunLost, match="finished"):
        store.record(run_id, events, status)
    assert not store.claim(run_id)


def test_of_two_services_recording_at_the_same_position_only_the_first_succeeds() -> None:
    run_id = start(ECHO_CHAIN)
    store = OrmRunStore()
    events, status = next_events(store, run_id, entered())
    other = [Envelope(run_id, 1, AT, "NodeEntered", {"node": "second"})]
    store.record(run_id, events, status)

    with pytest.raises(RunLost, match="moved on"):
        store.record(run_id, other, status)
    assert [event.payload for event in store.load_run(run_id).events[1:]] == [{"node": "first"}]


def test_an_append_that_breaks_the_log_is_refused_and_writes_nothing() -> None:
    run_id = start(ECHO_CHAIN)
    store = OrmRunStore("worker-a")
    store.claim(run_id)
    events, status = next_events(store, run_id, entered(), ("NodeExited", {"node": "first"}))
    gap = [events[0], Envelope(run_id, 3, AT, "NodeExited", {"node": "first"})]
    wrong_version = [Envelope(run_id, 1, AT, "NodeEntered", {"node": "first"}, schema_version=2)]
    second_start = [Envelope(run_id, 1, AT, "GraphRunStarted", {"graph_hash": "x", "input": 1})]

    for refused in (gap, wrong_version, second_start):
        with pytest.raises(AppendRefused):
            store.append(run_id, refused, status)

    run = Run.objects.get(pk=run_id)
    assert (run.state, run.event_count) == ("queued", 1)
    assert RunEvent.objects.filter(run_id=run_id).count() == 1


def test_releasing_frees_the_run_for_the_next_worker_and_only_the_holder_can_release() -> None:
    run_id = start(ECHO_CHAIN)
    holder, other = OrmRunStore("worker-a"), OrmRunStore("worker-b")
    holder.claim(run_id)

    other.release(run_id)
    assert not other.claim(run_id)
    holder.release(run_id)
    assert other.claim(run_id)
