"""Deadlines that act (issue 26): a card's reminder and its due time, acted on by the workers
once each, whoever comes first: escalated, resolved with the policy's value by "the deadline",
or noted overdue; the people the policy names told by email, and the webhooks by JSON.

Time does not pass in these tests: a deadline is acted on with ``now`` after it (as a worker
whose clock reached it would), or, for the sweep, with the card's instants moved into the
past. Due times are seconds, as a policy allows.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from pytest_django import DjangoCaptureOnCommitCallbacks, Settings

from editor.models import InboxCard, InboxNote, RunEvent
from editor.services import documents, runs
from editor.services.documents import approvals
from editor.services.inbox import deadlines, log, queue
from editor.tasks import (
    NOTICE_ATTEMPTS,
    act_on_due_deadlines,
    mail_deadline_notice,
    notice_delay,
    post_deadline_notice,
)
from tests.integration.api.callers import bearer_caller, make_user
from tests.integration.api.running import GATED, drive, event_count
from tests.integration.mailers import RefusingMailer

pytestmark = pytest.mark.django_db

ACT = "editor.tasks.act_on_deadline"
MAIL = "editor.tasks.mail_deadline_notice"
POST = "editor.tasks.post_deadline_notice"


@pytest.fixture
def team(db: None) -> dict[str, User]:
    """ada writes, otto starts runs; fay and finn are in finance, dan in desk (all approve)."""
    for name in ("finance", "desk"):
        Group.objects.create(name=name)
    people = {name: make_user(name, "approvers") for name in ("fay", "finn", "dan", "zoe")}
    people["ada"] = make_user("ada", "authors")
    people["otto"] = make_user("otto", "operators")
    for name, group in (("fay", "finance"), ("finn", "finance"), ("dan", "desk")):
        people[name].groups.add(Group.objects.get(name=group))
    for user in people.values():
        user.email = f"{user.username}@example.org"
        user.save()
    return people


@pytest.fixture
def email(settings: Settings) -> None:
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    settings.GATEHOUSE_EMAIL_ENABLED = True
    settings.GATEHOUSE_BASE_URL = "https://gatehouse.example.org"


def waiting(team: dict[str, User], policy: dict[str, Any], graph: dict[str, Any] = GATED) -> str:
    created = documents.create_document(team["ada"], title="Refunds", text=json.dumps(graph))
    digest = documents.freeze(team["ada"], created.slug, expected_revision=1).graph
    approvals.replace_policy(team["ada"], created.slug, {"gates": {"review": policy}})
    run_id = runs.start_run(team["otto"], digest, {"note": "x"}, document_slug=created.slug).run
    assert drive(run_id) == "suspended"
    return run_id


def card_of(run_id: str) -> InboxCard:
    return InboxCard.objects.get(run_id=run_id)


def after(moment: Any, seconds: float = 1) -> Any:
    return moment + timedelta(seconds=seconds)


def queued(path: str) -> list[list[Any]]:
    return [row.args_kwargs["args"] for row in DBTaskResult.objects.filter(task_path=path)]


FINANCE = {"groups": ["finance"], "users": []}


def test_a_card_with_a_due_time_queues_its_reminder_and_due_time_for_their_instants(
    team: dict[str, User], django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run_id = waiting(team, {"deciders": FINANCE, "due": "4s", "remind_at": "50%"})

    card = card_of(run_id)
    tasks = {
        row.args_kwargs["args"][2]: row.run_after
        for row in DBTaskResult.objects.filter(task_path=ACT)
    }
    assert tasks == {"remind": card.remind_at, "expire": card.due_at}
    assert card.due_at - card.opened_at == timedelta(seconds=4)
    assert card.remind_at - card.opened_at == timedelta(seconds=2)


def test_the_reminder_goes_once_to_the_people_who_may_decide_the_card(
    team: dict[str, User], email: None, mailoutbox: list[Any]
) -> None:
    run_id = waiting(team, {"deciders": FINANCE, "due": "4s", "remind_at": "50%", "quorum": 2})
    runs.resume(team["fay"], run_id, {"input": {"approved": True}})  # fay voted already
    card = card_of(run_id)

    early = deadlines.act(run_id, card.seq, "remind", now=card.opened_at)
    first = deadlines.act(run_id, card.seq, "remind", now=after(card.remind_at))
    second = deadlines.act(run_id, card.seq, "remind", now=after(card.remind_at, 2))

    assert (early, first, second) == ("early", "reminded", "done")
    assert queued(MAIL) == [[run_id, card.seq, "reminder"]]
    assert mail_deadline_notice.call(run_id, card.seq, "reminder") == 1
    (message,) = mailoutbox
    assert message.to == ["finn@example.org"]  # finance, but for fay, who voted
    assert message.subject.startswith("Reminder: review (Refunds) is due at")
    assert f"/inbox/?run={run_id}#card-{run_id}-{card.seq}" in message.body
    (note,) = InboxNote.objects.all()
    assert (note.kind, note.by) == ("reminder", "the deadline")


def test_an_expired_card_escalates_once_and_the_escalation_group_may_then_decide(
    team: dict[str, User], email: None, mailoutbox: list[Any]
) -> None:
    expiry = {"escalate_to": {"groups": ["desk"], "users": []}}
    run_id = waiting(team, {"deciders": FINANCE, "due": "2s", "on_expiry": expiry})
    card = card_of(run_id)
    dan = bearer_caller(team["dan"])
    assert dan.post(f"/v1/runs/{run_id}/resume", {"input": {"approved": True}}).status_code == 403

    outcomes = [deadlines.act(run_id, card.seq, "expire", now=after(card.due_at)) for _ in "ab"]

    assert outcomes == ["escalated", "done"]
    (escalated,) = RunEvent.objects.filter(run_id=run_id, kind="GateEscalated")
    assert escalated.payload["to"] == {"groups": ["desk"], "users": []}
    assert escalated.payload["by"] == "the deadline"
    assert [item["run"] for item in dan.get("/v1/inbox?view=mine").json()["items"]] == [run_id]
    assert mail_deadline_notice.call(run_id, card.seq, "escalation") == 1
    assert [message.to for message in mailoutbox] == [["dan@example.org"]]
    assert "escalates it to desk: you may now decide it" in mailoutbox[0].body
    entry = log.decision_log(kind="escalation").items[0]
    assert (entry.entry, entry.escalated_to, entry.policy["due"]) == ("escalation", "desk", "2s")

    decided = dan.post(f"/v1/runs/{run_id}/resume", {"input": {"approved": True}})
    assert decided.status_code == 202
    assert drive(run_id) == "completed"


def test_an_expired_card_resolves_with_the_policys_value_as_the_deadline(
    team: dict[str, User], email: None, mailoutbox: list[Any]
) -> None:
    value = {"approved": False, "note": "no answer in time"}
    run_id = waiting(team, {"deciders": FINANCE, "due": "2s", "on_expiry": {"resolve_with": value}})
    card = card_of(run_id)

    outcomes = [deadlines.act(run_id, card.seq, "expire", now=after(card.due_at)) for _ in "ab"]

    assert outcomes == ["resolved", "gone"]
    (resumed,) = RunEvent.objects.filter(run_id=run_id, kind="Resumed")
    assert resumed.payload["by"] == "the deadline"
    assert resumed.payload["input"] == value
    assert resumed.payload["deadline"] == {"due_at": card.due_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}
    assert not InboxCard.objects.filter(run_id=run_id).exists()
    assert queued(MAIL) == [[run_id, card.seq, "resolved"]]
    assert mail_deadline_notice.call(run_id, card.seq, "resolved") == 2  # fay and finn
    assert "recorded as decided by the deadline" in mailoutbox[0].body
    entry = log.decision_log(kind="deadline").items[0]
    assert (entry.entry, entry.by, entry.input) == ("deadline", "the deadline", value)
    assert drive(run_id) == "completed"


def test_a_due_time_with_nothing_to_do_notes_the_card_overdue_once_and_it_stays(
    team: dict[str, User],
) -> None:
    run_id = waiting(team, {"deciders": FINANCE, "due": "1s"})
    card = card_of(run_id)

    outcomes = [deadlines.act(run_id, card.seq, "expire", now=after(card.due_at)) for _ in "ab"]

    assert outcomes == ["overdue", "done"]
    assert [note.kind for note in InboxNote.objects.all()] == ["overdue"]
    (item,) = queue.waiting_cards(team["fay"], "mine").items
    later = replace(item, now=after(card.due_at, 120))
    assert later.overdue and later.due_words == "overdue by 2 min"
    assert event_count(run_id) == RunEvent.objects.filter(run_id=run_id).count()


def test_a_value_the_runs_own_schema_refuses_resolves_nothing_and_notes_why(
    team: dict[str, User],
) -> None:
    strict = json.loads(json.dumps(GATED))
    strict["nodes"][1]["payload"]["approval_schema"]["required"] = ["approved", "note"]
    created = documents.create_document(team["ada"], title="Refunds", text=json.dumps(strict))
    digest = documents.freeze(team["ada"], created.slug, expected_revision=1).graph
    # The draft no longer needs a note: the policy's value is checked against it when saved.
    documents.save_draft(team["ada"], created.slug, text=json.dumps(GATED), expected_revision=1)
    expiry = {"resolve_with": {"approved": True}}
    approvals.replace_policy(
        team["ada"], created.slug, {"gates": {"review": {"due": "1s", "on_expiry": expiry}}}
    )
    run_id = runs.start_run(team["otto"], digest, None, document_slug=created.slug).run
    drive(run_id)
    card = card_of(run_id)

    outcome = deadlines.act(run_id, card.seq, "expire", now=after(card.due_at))

    assert outcome == "invalid"
    assert not RunEvent.objects.filter(run_id=run_id, kind="Resumed").exists()
    (note,) = InboxNote.objects.filter(kind="overdue")
    assert "does not match the gate's schema" in note.detail["reason"]
    assert InboxCard.objects.filter(run_id=run_id, expired_at__isnull=False).exists()


def test_the_workers_sweep_acts_on_deadlines_whose_task_was_lost(team: dict[str, User]) -> None:
    expiry = {"escalate_to": {"groups": ["desk"], "users": []}}
    run_id = waiting(
        team, {"deciders": FINANCE, "due": "2s", "remind_at": "50%", "on_expiry": expiry}
    )
    assert act_on_due_deadlines() == 0  # nothing has come yet
    past = timezone.now() - timedelta(seconds=deadlines.GRACE_SECONDS + 1)
    InboxCard.objects.filter(run_id=run_id).update(remind_at=past, due_at=past)

    assert act_on_due_deadlines() == 2  # the reminder and the escalation
    assert act_on_due_deadlines() == 0
    assert RunEvent.objects.filter(run_id=run_id, kind="GateEscalated").count() == 1
    assert [note.kind for note in InboxNote.objects.all()] == ["reminder"]


class _Hooks(BaseHTTPRequestHandler):
    received: ClassVar[list[tuple[str, dict[str, str], Any]]] = []
    #: The statuses of the next answers, by path (then 204).
    statuses: ClassVar[dict[str, list[int]]] = {}

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"null")
        self.received.append((self.path, dict(self.headers), body))
        waiting = self.statuses.get(self.path)
        self.send_response(waiting.pop(0) if waiting else 204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def hooks() -> Iterator[tuple[int, list[tuple[str, dict[str, str], Any]]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hooks)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], _Hooks.received
    server.shutdown()
    server.server_close()


def test_a_webhook_receives_each_notice_as_json_its_secret_never_logged(
    team: dict[str, User],
    settings: Settings,
    hooks: tuple[int, list[Any]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    port, received = hooks
    received.clear()
    listed = f"http://127.0.0.1:{port}/hooks/s3cret-token"
    unlisted = f"http://localhost:{port}/hooks/other-s3cret"  # a name for a private address
    settings.GATEHOUSE_WEBHOOKS = [listed, unlisted]
    run_id = waiting(team, {"deciders": FINANCE, "due": "1s"})
    card = card_of(run_id)
    deadlines.act(run_id, card.seq, "expire", now=after(card.due_at))

    assert queued(POST) == [[run_id, card.seq, "overdue"]]
    assert post_deadline_notice.call(run_id, card.seq, "overdue") == 1

    ((path, headers, body),) = received
    assert path == "/hooks/s3cret-token"
    assert headers["Content-Type"] == "application/json"
    assert headers["Idempotency-Key"] == f"gatehouse:{run_id}:{card.seq}:overdue"
    assert body["event"] == "gate_overdue"
    assert body["text"].startswith("Overdue: review (Refunds): ")
    assert (body["run"], body["node"], body["document"]) == (run_id, "review", body["document"])
    assert "not a public address" in caplog.text  # localhost is refused: only listed addresses
    assert "s3cret" not in caplog.text


def test_webhook_urls_are_read_strictly_and_a_bad_one_is_named_by_its_position() -> None:
    from django.core.exceptions import ImproperlyConfigured

    from editor.environment import webhook_urls

    assert webhook_urls("W", " https://chat.example.org/hook/a , ") == [
        "https://chat.example.org/hook/a"
    ]
    assert webhook_urls("W", None) == []
    for bad in ("ftp://x/y", "https://user:pw@chat.example.org/h", "https:///nohost", "nonsense"):
        with pytest.raises(ImproperlyConfigured, match="W: entry 2 is not") as raised:
            webhook_urls("W", f"https://ok.example.org/, {bad}")
        assert bad not in str(raised.value)


@pytest.fixture
def flaky_email(settings: Settings) -> Iterator[type[RefusingMailer]]:
    settings.MAILERS = {"default": {"BACKEND": "tests.integration.mailers.RefusingMailer"}}
    settings.GATEHOUSE_EMAIL_ENABLED = True
    settings.GATEHOUSE_BASE_URL = "https://gatehouse.example.org"
    RefusingMailer.reset()
    yield RefusingMailer
    RefusingMailer.reset()


def retries(path: str) -> list[tuple[list[Any], dict[str, Any], Any]]:
    """The tries queued again: their arguments, keyword arguments and instant."""
    return [
        (row.args_kwargs["args"], row.args_kwargs["kwargs"], row.run_after)
        for row in DBTaskResult.objects.filter(task_path=path).order_by("enqueued_at")
        if row.args_kwargs["kwargs"]
    ]


def test_a_notice_the_mail_server_refused_for_someone_is_tried_again_for_them_alone(
    team: dict[str, User], flaky_email: type[RefusingMailer], mailoutbox: list[Any]
) -> None:
    run_id = waiting(team, {"deciders": FINANCE, "due": "4s", "remind_at": "50%"})
    card = card_of(run_id)
    deadlines.act(run_id, card.seq, "remind", now=after(card.remind_at))
    flaky_email.refused = {"finn@example.org"}

    before = timezone.now()
    first = mail_deadline_notice.call(run_id, card.seq, "reminder")

    assert first == 1
    assert [m.to for m in mailoutbox] == [["fay@example.org"]]
    ((args, kwargs, run_after),) = retries(MAIL)
    assert (args, kwargs) == (
        [run_id, card.seq, "reminder"],
        {"attempt": 2, "only": ["finn@example.org"]},
    )
    assert before + timedelta(seconds=30) <= run_after <= timezone.now() + timedelta(seconds=30)

    flaky_email.refused = set()
    second = mail_deadline_notice.call(*args, **kwargs)

    assert second == 1
    assert [m.to for m in mailoutbox] == [["fay@example.org"], ["finn@example.org"]]
    assert len(retries(MAIL)) == 1  # nobody left to try


def test_a_mail_server_down_is_tried_again_with_longer_waits_then_given_up(
    team: dict[str, User],
    flaky_email: type[RefusingMailer],
    mailoutbox: list[Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    run_id = waiting(team, {"deciders": FINANCE, "due": "1s"})
    card = card_of(run_id)
    deadlines.act(run_id, card.seq, "expire", now=after(card.due_at))
    flaky_email.down = True

    assert mail_deadline_notice.call(run_id, card.seq, "overdue") == 0
    for attempt in range(2, NOTICE_ATTEMPTS + 1):
        args, kwargs, _ = retries(MAIL)[-1]
        assert kwargs["attempt"] == attempt
        assert sorted(kwargs["only"]) == ["fay@example.org", "finn@example.org"]
        assert mail_deadline_notice.call(*args, **kwargs) == 0

    waits = [notice_delay(attempt).total_seconds() for attempt in range(1, NOTICE_ATTEMPTS)]
    assert waits == [30, 60, 120, 240]
    assert len(retries(MAIL)) == NOTICE_ATTEMPTS - 1  # the last try queued nothing more
    assert mailoutbox == []
    assert "2 recipient(s) not reached after 5 tries" in caplog.text
    assert "example.org" not in caplog.text  # the log names no address


def test_a_webhook_down_or_busy_is_tried_again_with_the_same_key_and_a_refusal_is_not(
    team: dict[str, User], settings: Settings, hooks: tuple[int, list[Any]]
) -> None:
    port, received = hooks
    received.clear()
    settings.GATEHOUSE_WEBHOOKS = [
        f"http://127.0.0.1:{port}/busy",
        f"http://127.0.0.1:{port}/refuses",
        f"http://127.0.0.1:{port}/fine",
    ]
    _Hooks.statuses.update({"/busy": [503], "/refuses": [400]})
    run_id = waiting(team, {"deciders": FINANCE, "due": "1s"})
    card = card_of(run_id)
    deadlines.act(run_id, card.seq, "expire", now=after(card.due_at))

    assert post_deadline_notice.call(run_id, card.seq, "overdue") == 1  # /fine
    ((args, kwargs, _),) = retries(POST)
    assert kwargs == {"attempt": 2, "only": [1]}  # /busy, not /refuses
    assert post_deadline_notice.call(*args, **kwargs) == 1

    paths = [path for path, _, _ in received]
    assert paths == ["/busy", "/refuses", "/fine", "/busy"]
    keys = {headers["Idempotency-Key"] for _, headers, _ in received}
    assert keys == {f"gatehouse:{run_id}:{card.seq}:overdue"}
    assert len(retries(POST)) == 1
