"""Data retention (``manage.py prune``): the runs that finished longer ago than
``GATEHOUSE_FINISHED_RUN_RETENTION_DAYS`` go with their events, in small transactions; nothing
else is touched. At scale: thousands of runs and tens of thousands of events, one run longer
than a batch."""

from __future__ import annotations

import io
import json
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.models import Count, Max, Min
from django.utils import timezone
from pytest_django import Settings

from editor.models import Run, RunEvent
from editor.services import documents
from editor.services.retention import Batch, finished_cutoff, prune_finished_runs
from tests.integration.api.running import ECHO_CHAIN

pytestmark = pytest.mark.django_db(transaction=True)

OLD_FINISHED = 3_000
EVENTS_EACH = 10
BIG = 25_000
SMALL = 300


def graph(author: User) -> str:
    made = documents.create_document(author, title="Notes", text=json.dumps(ECHO_CHAIN))
    return documents.freeze(author, made.slug, expected_revision=1).graph


def runs_of(
    digest: str, state: str, count: int, days_ago: float, events: int = EVENTS_EACH
) -> list:
    """``count`` runs in ``state`` whose last event was ``days_ago`` days ago, each with a log of
    ``events`` events (written in bulk: the rows are what matters here, not their meaning)."""
    finished = timezone.now() - timedelta(days=days_ago)
    ids, rows, logs = [], [], []
    for _ in range(count):
        run_id = uuid.uuid4()
        ids.append(run_id)
        rows.append(
            Run(
                id=run_id,
                graph_id=digest,
                state=state,
                status={"state": state},
                event_count=events,
                created_at=finished - timedelta(minutes=5),
                updated_at=finished,
            )
        )
        logs += [
            RunEvent(run_id=run_id, seq=seq, recorded_at="", kind="NodeEntered", payload={})
            for seq in range(events)
        ]
    times = [Run._meta.get_field(name) for name in ("created_at", "updated_at")]
    for field in times:
        field.auto_now = field.auto_now_add = False
    try:
        Run.objects.bulk_create(rows, batch_size=1000)
    finally:
        times[0].auto_now_add, times[1].auto_now = True, True
    RunEvent.objects.bulk_create(logs, batch_size=5000)
    return ids


def build(author: User, old: int, big: int) -> dict[str, Any]:
    digest = graph(author)
    return {
        "old": runs_of(digest, "completed", old // 3, 100)
        + runs_of(digest, "failed", old // 3, 45)
        + runs_of(digest, "abandoned", old // 3, 31),
        "big": runs_of(digest, "completed", 1, 200, events=big),
        "recent": runs_of(digest, "completed", 300, 29),
        "unfinished": runs_of(digest, "queued", 50, 400)
        + runs_of(digest, "running", 50, 400)
        + runs_of(digest, "suspended", 50, 400)
        + runs_of(digest, "budget_exceeded", 50, 400),
    }


@pytest.fixture
def installation(author: User) -> dict[str, Any]:
    """At scale: 3,000 runs past the retention, one of them 25,000 events long."""
    return build(author, OLD_FINISHED, BIG)


@pytest.fixture
def small(author: User) -> dict[str, Any]:
    return build(author, SMALL, 20)


def remaining(ids: list) -> tuple[int, int]:
    return Run.objects.filter(id__in=ids).count(), RunEvent.objects.filter(run_id__in=ids).count()


def test_runs_finished_before_the_retention_go_with_their_events_in_small_transactions(
    installation: dict[str, Any],
) -> None:
    big = installation["big"][0]
    batches: list[Batch] = []
    logs_of_big: list[dict[str, Any]] = []

    def watch(batch: Batch) -> None:
        assert not connection.in_atomic_block  # nothing holds the database between batches
        batches.append(batch)
        log = RunEvent.objects.filter(run_id=big).aggregate(
            count=Count("seq"), first=Min("seq"), last=Max("seq")
        )
        logs_of_big.append(log)

    report = prune_finished_runs(
        finished_cutoff(30), batch_runs=400, batch_events=2_000, pause=0, on_batch=watch
    )

    assert remaining(installation["old"] + installation["big"]) == (0, 0)
    assert remaining(installation["recent"]) == (300, 300 * EVENTS_EACH)
    assert remaining(installation["unfinished"]) == (200, 200 * EVENTS_EACH)
    assert (report.runs, report.events) == (OLD_FINISHED + 1, OLD_FINISHED * EVENTS_EACH + BIG)
    assert max(batch.events for batch in batches) <= 2_000
    assert max(batch.runs for batch in batches) <= 400
    assert report.batches == len(batches) >= (OLD_FINISHED * EVENTS_EACH + BIG) // 2_000
    # The long run lost its log from the end: always a prefix, never a log with gaps.
    assert all(
        log["count"] == 0 or (log["first"], log["last"]) == (0, log["count"] - 1)
        for log in logs_of_big
    )
    assert sum(1 for log in logs_of_big if 0 < log["count"] < BIG) >= BIG // 2_000 - 1


def test_the_command_removes_what_the_setting_says_and_a_dry_run_only_counts(
    small: dict[str, Any], settings: Settings
) -> None:
    settings.GATEHOUSE_FINISHED_RUN_RETENTION_DAYS = 40
    out = io.StringIO()

    call_command("prune", "--dry-run", stdout=out)
    assert remaining(small["old"])[0] == SMALL
    expected = 2 * SMALL // 3 + 1
    assert f"{expected} runs finished before" in out.getvalue()
    assert "would be removed" in out.getvalue()

    call_command("prune", "--pause", "0", "--batch-events", "100", stdout=out)

    assert f"Removed {expected} runs" in out.getvalue()
    # Abandoned 31 days ago: within 40 days, kept.
    assert remaining(small["old"]) == (SMALL // 3, SMALL // 3 * EVENTS_EACH)
    assert remaining(small["recent"])[0] == 300


def test_without_the_setting_nothing_is_removed(small: dict[str, Any], settings: Settings) -> None:
    settings.GATEHOUSE_FINISHED_RUN_RETENTION_DAYS = None
    out = io.StringIO()

    call_command("prune", stdout=out)

    assert "kept forever. Nothing removed." in out.getvalue()
    assert Run.objects.count() == SMALL + 1 + 300 + 200


def test_a_batch_size_that_is_not_a_whole_number_is_refused(small: dict[str, Any]) -> None:
    with pytest.raises(CommandError, match="--batch-events: must be a whole number of at least 1"):
        call_command("prune", "--batch-events", "0", stderr=io.StringIO())
    assert Run.objects.count() == SMALL + 1 + 300 + 200


def test_the_setting_takes_a_whole_number_of_days_or_nothing(monkeypatch: Any) -> None:
    from django.core.exceptions import ImproperlyConfigured

    from editor.settings import env_optional_int

    monkeypatch.setenv("GATEHOUSE_FINISHED_RUN_RETENTION_DAYS", "")
    assert env_optional_int("GATEHOUSE_FINISHED_RUN_RETENTION_DAYS") is None
    monkeypatch.setenv("GATEHOUSE_FINISHED_RUN_RETENTION_DAYS", "90")
    assert env_optional_int("GATEHOUSE_FINISHED_RUN_RETENTION_DAYS") == 90
    for wrong in ("0", "ninety", "-3", "1.5"):
        monkeypatch.setenv("GATEHOUSE_FINISHED_RUN_RETENTION_DAYS", wrong)
        with pytest.raises(ImproperlyConfigured, match="GATEHOUSE_FINISHED_RUN_RETENTION_DAYS"):
            env_optional_int("GATEHOUSE_FINISHED_RUN_RETENTION_DAYS")
