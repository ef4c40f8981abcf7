"""Approvers are emailed when a gate suspends (spec 06 *Approval inbox*, spec 07 *Email*)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django_tasks_db.models import DBTaskResult
from pytest_django import DjangoCaptureOnCommitCallbacks, Settings

from editor.models import Run
from editor.services import documents, runs
from editor.services.runs import test_runs
from editor.tasks import drive_run, notify_approvers
from tests.integration.api.callers import bearer_caller, make_user
from tests.integration.api.running import store
from tests.integration.inbox import HOSTILE, gated
from tests.integration.mailers import RefusingMailer

pytestmark = pytest.mark.django_db

NOTIFY = "editor.tasks.notify_approvers"


@pytest.fixture
def email(settings: Settings) -> None:
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    settings.GATEHOUSE_EMAIL_ENABLED = True
    settings.GATEHOUSE_BASE_URL = "https://gatehouse.example.org"


@pytest.fixture
def approvers(db: None) -> list[User]:
    """Two approvers with addresses, a superuser, one approver without, one operator."""
    with_address = [make_user("april", "approvers"), make_user("bea", "approvers")]
    for user in with_address:
        user.email = f"{user.username}@example.org"
        user.save()
    User.objects.create_superuser("root", "root@example.org", "not-used")
    make_user("carl", "approvers")  # no address
    operator = make_user("opal", "operators")
    operator.email = "opal@example.org"
    operator.save()
    return with_address


def started(author: User, operator: User, graph: dict[str, Any] | None = None) -> str:
    digest = store(bearer_caller(author), graph or gated())
    return runs.start_run(operator, digest, {"draft": "v1"}).run


def queued_notifications() -> list[list[Any]]:
    return [row.args_kwargs["args"] for row in DBTaskResult.objects.filter(task_path=NOTIFY)]


def test_a_suspension_queues_one_notification_which_mails_each_approver_once(
    email: None,
    approvers: list[User],
    author: User,
    operator: User,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
    mailoutbox: list[Any],
) -> None:
    run_id = started(author, operator, gated(name="Final review"))

    with django_capture_on_commit_callbacks(execute=True):
        assert drive_run.call(run_id) == "suspended"
        drive_run.call(run_id)  # driven again: nothing new is recorded, nothing is queued

    seq = Run.objects.get(pk=run_id).status["pending"][0]["seq"]
    assert queued_notifications() == [[run_id, seq]]
    assert notify_approvers.call(run_id, seq) == 3
    assert sorted(message.to[0] for message in mailoutbox) == [
        "april@example.org",
        "bea@example.org",
        "root@example.org",
    ]
    message = mailoutbox[0]
    assert len(message.to) == 1
    assert "Final review" in message.subject
    assert "Publish?" in message.body
    assert f"https://gatehouse.example.org/inbox/?run={run_id}#card-{run_id}-{seq}" in message.body


def test_without_email_configured_nothing_is_queued_or_sent(
    approvers: list[User],
    author: User,
    operator: User,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
    mailoutbox: list[Any],
) -> None:
    run_id = started(author, operator)

    with django_capture_on_commit_callbacks(execute=True):
        assert drive_run.call(run_id) == "suspended"

    assert queued_notifications() == []
    assert notify_approvers.call(run_id, 4) == 0
    assert mailoutbox == []


def test_a_suspension_resolved_before_the_mail_went_out_is_not_announced(
    email: None,
    approvers: list[User],
    author: User,
    operator: User,
    mailoutbox: list[Any],
) -> None:
    run_id = started(author, operator)
    drive_run.call(run_id)
    seq = Run.objects.get(pk=run_id).status["pending"][0]["seq"]
    runs.resume(approvers[0], run_id, {"input": {"approved": True}})

    assert notify_approvers.call(run_id, seq) == 0
    assert mailoutbox == []


def test_the_mail_is_plain_text_whatever_the_prompt_says(
    email: None, approvers: list[User], author: User, operator: User, mailoutbox: list[Any]
) -> None:
    run_id = started(author, operator, gated(prompt=HOSTILE + "\nSecond line"))
    drive_run.call(run_id)
    seq = Run.objects.get(pk=run_id).status["pending"][0]["seq"]

    notify_approvers.call(run_id, seq)

    message = mailoutbox[0]
    assert "\n" not in message.subject
    assert HOSTILE in message.body
    assert message.content_subtype == "plain"


def test_a_test_runs_suspension_mails_no_approver(
    email: None,
    approvers: list[User],
    author: User,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
    mailoutbox: list[Any],
) -> None:
    documents.create_document(author, title="Trial", text=json.dumps(gated()), slug="trial")
    run_id = test_runs.start_test_run(author, "trial", {"draft": "v1"}).run
    with django_capture_on_commit_callbacks(execute=True):
        assert drive_run.call(run_id) == "suspended"

    seq = Run.objects.get(pk=run_id).status["pending"][0]["seq"]
    # Its author decides it in the editor: the approvers are not told.
    assert notify_approvers.call(run_id, seq) == 0
    assert mailoutbox == []


def test_a_suspension_mail_the_mail_server_refused_is_tried_again_for_that_approver_alone(
    settings: Settings, approvers: list[User], author: User, operator: User, mailoutbox: list[Any]
) -> None:
    settings.MAILERS = {"default": {"BACKEND": "tests.integration.mailers.RefusingMailer"}}
    settings.GATEHOUSE_EMAIL_ENABLED = True
    RefusingMailer.reset()
    RefusingMailer.refused = {"bea@example.org"}
    run_id = started(author, operator)
    drive_run.call(run_id)
    seq = Run.objects.get(pk=run_id).status["pending"][0]["seq"]

    try:
        assert notify_approvers.call(run_id, seq) == 2  # april and root
        (retry,) = [row for row in DBTaskResult.objects.filter(task_path=NOTIFY)]
        assert retry.args_kwargs == {
            "args": [run_id, seq],
            "kwargs": {"attempt": 2, "only": ["bea@example.org"]},
        }
        RefusingMailer.refused = set()
        assert notify_approvers.call(run_id, seq, **retry.args_kwargs["kwargs"]) == 1
    finally:
        RefusingMailer.reset()

    assert sorted(address for m in mailoutbox for address in m.to) == [
        "april@example.org",
        "bea@example.org",
        "root@example.org",
    ]
    assert DBTaskResult.objects.filter(task_path=NOTIFY).count() == 1  # nobody left to try
