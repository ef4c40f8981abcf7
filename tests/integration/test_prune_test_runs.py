"""``manage.py prune`` and the test runs of drafts: those that finished more than
``GATEHOUSE_TEST_RUN_RETENTION_DAYS`` days ago (14 unless set) go with their events, even with
no retention set for other runs; other runs, and test runs still waiting, stay."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from pytest_django import Settings

from editor.models import Run, RunEvent
from tests.integration.test_prune import graph, runs_of

pytestmark = pytest.mark.django_db


def test_finished_test_runs_past_their_retention_go_and_everything_else_stays(
    author: User, settings: Settings
) -> None:
    settings.GATEHOUSE_FINISHED_RUN_RETENTION_DAYS = None
    digest = graph(author)
    old_tests = runs_of(digest, "completed", 3, days_ago=15, events=4)
    recent_tests = runs_of(digest, "failed", 2, days_ago=13, events=4)
    waiting_test = runs_of(digest, "suspended", 1, days_ago=30, events=4)
    ordinary = runs_of(digest, "completed", 2, days_ago=30, events=4)
    Run.objects.filter(id__in=[*old_tests, *recent_tests, *waiting_test]).update(test_revision=1)
    out = io.StringIO()

    call_command("prune", "--dry-run", stdout=out)
    assert "3 test runs finished before" in out.getvalue()
    assert Run.objects.count() == 8

    call_command("prune", "--pause", "0", stdout=out)

    kept = set(Run.objects.values_list("id", flat=True))
    assert kept == {*recent_tests, *waiting_test, *ordinary}
    assert not RunEvent.objects.filter(run_id__in=old_tests).exists()
    assert "3 test runs finished before" in out.getvalue()


def test_the_test_run_retention_is_its_own_setting(author: User, settings: Settings) -> None:
    settings.GATEHOUSE_TEST_RUN_RETENTION_DAYS = 2
    digest = graph(author)
    tests = runs_of(digest, "completed", 2, days_ago=3, events=2)
    Run.objects.filter(id__in=tests).update(test_revision=4)

    call_command("prune", "--pause", "0", stdout=io.StringIO())

    assert not Run.objects.exists()
