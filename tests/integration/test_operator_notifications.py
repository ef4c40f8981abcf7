"""Operators are emailed about budget and reconciliation cards, as approvers are about gates
(``docs/inbox.md``): once per card, after the card's event has committed, with absolute
links."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django_tasks_db.models import DBTaskResult
from pytest_django import DjangoCaptureOnCommitCallbacks, Settings

from editor.engine.ports import Envelope
from editor.engine.status import run_status
from editor.models import Run
from editor.services import agents, runs
from editor.tasks import AnnouncingRunStore, drive_run, notify_approvers, notify_operators
from tests.integration.api.callers import bearer_caller, make_user
from tests.integration.api.running import park, store
from tests.integration.inbox import gated

pytestmark = pytest.mark.django_db

NOTIFY_OPERATORS = "editor.tasks.notify_operators"
TOOL_CALL = json.dumps({"tool_calls": [{"name": "echo", "arguments": {"n": 1}}]})


@pytest.fixture
def email(settings: Settings) -> None:
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    settings.GATEHOUSE_EMAIL_ENABLED = True
    settings.GATEHOUSE_BASE_URL = "https://gatehouse.example.org"


@pytest.fixture
def people(db: None) -> None:
    """Two operators with addresses, one without, an approver, and a superuser."""
    for name, group, address in (
        ("opal", "operators", "opal@example.org"),
        ("oscar", "operators", "oscar@example.org"),
        ("olga", "operators", ""),
        ("april", "approvers", "april@example.org"),
    ):
        user = make_user(name, group)
        user.email = address
        user.save()
    User.objects.create_superuser("root", "root@example.org", "not-used")


def budgeted_run(author: User, operator: User) -> str:
    """A run of one agent allowed one step, which asks for two tool calls."""
    definition = {
        "name": "budgeted",
        "model": "scripted",
        "prompt": "Research the subject.",
        "tools": ["echo"],
        "budget": {"max_steps": 1},
        "options": {"replies": [TOOL_CALL, TOOL_CALL, '"done"']},
    }
    agent = agents.create_agent(author, json.dumps(definition)).agent
    graph = {
        "schema_version": 1,
        "nodes": [{"kind": "agent", "payload": {"id": "research", "agent_hash": agent}}],
        "edges": [],
    }
    digest = store(bearer_caller(author), graph)
    return runs.start_run(operator, digest, {"subject": "tea"}).run


def queued() -> list[list[Any]]:
    rows = DBTaskResult.objects.filter(task_path=NOTIFY_OPERATORS).order_by("enqueued_at")
    return [row.args_kwargs["args"] for row in rows]


def pending_seq(run_id: str) -> int:
    return Run.objects.get(pk=run_id).status["pending"][0]["seq"]


def test_each_budget_card_is_announced_to_the_operators_once(
    email: None,
    people: None,
    author: User,
    operator: User,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
    mailoutbox: list[Any],
) -> None:
    run_id = budgeted_run(author, operator)

    with django_capture_on_commit_callbacks(execute=True):
        assert drive_run.call(run_id) == "budget_exceeded"
        drive_run.call(run_id)  # driven again: nothing new is recorded, nothing is queued
    first = pending_seq(run_id)

    assert queued() == [[run_id, first]]
    assert notify_operators.call(run_id, first) == 3
    assert sorted(message.to[0] for message in mailoutbox) == [
        "opal@example.org",
        "oscar@example.org",
        "root@example.org",
    ]
    message = mailoutbox[0]
    assert (
        message.subject
        == "Budget exceeded: research (" + Run.objects.get(pk=run_id).graph_id[:15] + "…)"
    )
    assert "The steps budget of 1" in message.body
    assert (
        f"https://gatehouse.example.org/inbox/?run={run_id}#card-{run_id}-{first}" in message.body
    )

    # Raised, the run crosses the new limit: a new card, announced once more.
    runs.resume(operator, run_id, {"input": {"limit": 2}})
    with django_capture_on_commit_callbacks(execute=True):
        assert drive_run.call(run_id) == "budget_exceeded"
    second = pending_seq(run_id)
    assert second > first
    assert queued() == [[run_id, first], [run_id, second]]


def test_a_cut_off_write_is_announced_once_its_event_has_committed(
    email: None,
    people: None,
    author: User,
    operator: User,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
    mailoutbox: list[Any],
) -> None:
    run_id = runs.start_run(operator, store(bearer_caller(author), gated()), None).run
    driver = AnnouncingRunStore("a-test-driver", 30)
    assert driver.claim(run_id)
    existing = list(driver.load_run(run_id).events)
    lost = {
        "node": "write",
        "tool": "http_request",
        "call": 0,
        "input": {"url": "http://example.test/"},
        "idempotency_key": "sha256:" + "1" * 64,
    }
    events = [
        Envelope(
            run_id, len(existing), "2026-01-01T00:00:00.000000Z", "NodeEntered", {"node": "write"}
        ),
        Envelope(
            run_id, len(existing) + 1, "2026-01-01T00:00:01.000000Z", "ReconciliationNeeded", lost
        ),
    ]

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        driver.append(run_id, events, run_status([*existing, *events]))
        assert queued() == []  # nothing before the commit
    for callback in callbacks:
        callback()

    assert queued() == [[run_id, len(existing) + 1]]
    assert notify_operators.call(run_id, len(existing) + 1) == 3
    assert mailoutbox[0].subject.startswith("Unknown outcome of a write: write (")
    assert "The write tool http_request" in mailoutbox[0].body
    assert f"/inbox/?run={run_id}#card-{run_id}-{len(existing) + 1}" in mailoutbox[0].body


def test_a_card_resolved_before_the_mail_went_out_is_not_announced(
    email: None, people: None, author: User, operator: User, mailoutbox: list[Any]
) -> None:
    run_id = runs.start_run(operator, store(bearer_caller(author), gated()), None).run
    park(run_id, "reconciliation")
    seq = pending_seq(run_id)
    runs.resume(operator, run_id, {"input": {"retry": True}})

    assert notify_operators.call(run_id, seq) == 0
    assert mailoutbox == []


def test_a_gate_is_not_an_operators_card(
    email: None, people: None, author: User, operator: User, mailoutbox: list[Any]
) -> None:
    run_id = runs.start_run(operator, store(bearer_caller(author), gated()), None).run
    assert drive_run.call(run_id) == "suspended"

    assert notify_operators.call(run_id, pending_seq(run_id)) == 0
    assert mailoutbox == []


def test_without_email_configured_nothing_is_queued_or_sent(
    people: None,
    author: User,
    operator: User,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
    mailoutbox: list[Any],
) -> None:
    run_id = budgeted_run(author, operator)

    with django_capture_on_commit_callbacks(execute=True):
        assert drive_run.call(run_id) == "budget_exceeded"

    assert queued() == []
    assert notify_operators.call(run_id, pending_seq(run_id)) == 0
    assert mailoutbox == []


@pytest.mark.parametrize(
    ("hosts", "tls", "base"),
    [
        (["gatehouse.example.com", "localhost"], True, "https://gatehouse.example.com"),
        ([".example.com", "*"], False, "http://127.0.0.1:8000"),
    ],
)
def test_links_are_absolute_even_without_a_base_url(
    email: None,
    people: None,
    author: User,
    operator: User,
    settings: Settings,
    mailoutbox: list[Any],
    hosts: list[str],
    tls: bool,
    base: str,
) -> None:
    gate = runs.start_run(operator, store(bearer_caller(author), gated()), None).run
    drive_run.call(gate)
    budget = budgeted_run(author, operator)
    drive_run.call(budget)
    settings.GATEHOUSE_BASE_URL = ""
    settings.ALLOWED_HOSTS = hosts
    settings.GATEHOUSE_TLS = tls

    notify_approvers.call(gate, pending_seq(gate))
    notify_operators.call(budget, pending_seq(budget))

    links = {message.body.split("inbox: ")[1].split()[0] for message in mailoutbox}
    assert links == {
        f"{base}/inbox/?run={gate}#card-{gate}-{pending_seq(gate)}",
        f"{base}/inbox/?run={budget}#card-{budget}-{pending_seq(budget)}",
    }
